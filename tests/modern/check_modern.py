#!/usr/bin/env python3
"""check_modern.py: modern_sycl traced and untraced, checked against the device's truth.

Usage: check_modern.py --check-timing CHECK_TIMING_PY --program MODERN_SYCL --shim SHIM
                       --sim LIBZESIM --record RECORD --merge ZEPROF_MERGE [--keep DIR]

Records modern_sycl under the shim with tests/timing/check_timing.py's recorder (a private
session daemon, blocking channel, the device's truth file) and applies its checks: one timing per
executed command, each the truth of one command (counter-based timestamp events reused without a
reset included: none lost), what the program read from its events equal to what the tracer
reported and to the truth. Then its own:
- extension functions: each lookup is traced with its name; the one the headers declare
  (zeCommandListHostSynchronize) comes back as the shim's wrapper, and every call made through it
  is traced (entry with the list, exit with success) and acts as a drain anchor; the driver's own
  (zexSimulatorGetDeviceCount, in no header) comes back untouched, the driver's code;
- the external-semaphore appends each have one timing, matched with the truth (by check_timing);
- zeprof-merge's tally of the trace has no anomaly;
- untraced, the program passes its own checks, reads its kernels' truth from its events, and both
  lookups give the driver's code.
Exit 0 on success, 1 with "FAIL ..." lines otherwise, 99 when the recording could not be set up.
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HARNESS_ERROR = 99
KNOWN = 'zeCommandListHostSynchronize'
UNKNOWN = 'zexSimulatorGetDeviceCount'
MISSING = 'zexNoSuchFunction'
SEMAPHORE_APPENDS = ('zeCommandListAppendSignalExternalSemaphoreExt',
                     'zeCommandListAppendWaitExternalSemaphoreExt')


def load_check_timing(path):
    spec = importlib.util.spec_from_file_location('check_timing', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def split_report(path):
    """modern_sycl's own lines, and the rest written back for check_timing's reader."""
    own = {'extension': {}}
    kept = []
    with open(path) as report:
        for line in report:
            words = line.split()
            if words and words[0] == 'extension':
                own['extension'][words[1]] = words[2]
            elif words and words[0] in ('list', 'list_synchronize'):
                own[words[0]] = int(words[1])
            else:
                kept.append(line)
    with open(path, 'w') as report:
        report.writelines(kept)
    return own


def check_extensions(events, own, shim, sim, errors):
    lookups = [f['name'] for _, provider, name, f in events
               if provider == 'zeprof_ze' and name == 'zeDriverGetExtensionFunctionAddress_desc']
    if sorted(lookups) != sorted([KNOWN, UNKNOWN, MISSING]):
        errors.append(f'extension lookups traced with names {lookups}, expected '
                      f'{[KNOWN, UNKNOWN, MISSING]}')
    objects = {name: os.path.realpath(path) for name, path in own['extension'].items()}
    if objects.get(KNOWN) != os.path.realpath(shim):
        errors.append(f'{KNOWN} looked up under zeprof is in {objects.get(KNOWN)}, '
                      f'not the shim ({shim})')
    if objects.get(UNKNOWN) != os.path.realpath(sim):
        errors.append(f'{UNKNOWN} (in no header) looked up under zeprof is in '
                      f'{objects.get(UNKNOWN)}, not the driver ({sim}): '
                      'it must be handed back untouched')
    entries = [f for _, provider, name, f in events
               if provider == 'zeprof_ze' and name == f'{KNOWN}_entry']
    exits = [f for _, provider, name, f in events
             if provider == 'zeprof_ze' and name == f'{KNOWN}_exit']
    want = own.get('list_synchronize')
    if len(entries) != want or len(exits) != want:
        errors.append(f'{KNOWN} through the looked-up pointer: {len(entries)} entries and '
                      f'{len(exits)} exits traced, the program made {want} calls')
    if any(f['hCommandList'] != own.get('list') for f in entries):
        errors.append(f'{KNOWN} traced with another list than the program\'s {own.get("list")}')
    if any(f['result'] != 0 for f in exits):
        errors.append(f'{KNOWN} traced with results {[f["result"] for f in exits]}')


def check_semaphores(events, errors):
    appends = {f['call_id']: f['name'] for _, provider, name, f in events
               if provider == 'zeprof_device' and name == 'append'}
    timed = {}
    for _, provider, name, f in events:
        if provider == 'zeprof_device' and name == 'device_timing' and f['status'] == 0:
            function = appends.get(f['call_id'])
            timed[function] = timed.get(function, 0) + 1
    for function in SEMAPHORE_APPENDS:
        if timed.get(function) != 1:
            errors.append(f'{function}: {timed.get(function, 0)} timings, expected 1')


def check_tally(merge, trace_dir, errors):
    result = subprocess.run([merge, '-j', trace_dir], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, timeout=300)
    if result.returncode != 0:
        errors.append(f'zeprof-merge -j exited with {result.returncode}: {result.stderr}')
        return
    anomalies = json.loads(result.stdout).get('anomalies', {})
    nonzero = {key: value for key, value in anomalies.items() if value}
    if nonzero:
        errors.append(f'anomalies in the tally: {nonzero}')


def untraced_env(env, shim):
    """Without the shim's directory in LD_LIBRARY_PATH (meson puts the build's library
    directories there), where it would stand in for the loader the program's run path names."""
    shim_dir = os.path.realpath(os.path.dirname(shim))
    paths = [p for p in env.get('LD_LIBRARY_PATH', '').split(':')
             if p and os.path.realpath(p) != shim_dir]
    env['LD_LIBRARY_PATH'] = ':'.join(paths)
    return env


def main():
    parser = argparse.ArgumentParser()
    for option in ('--check-timing', '--program', '--shim', '--sim', '--record', '--merge'):
        parser.add_argument(option, required=True)
    parser.add_argument('--keep')
    opts = parser.parse_args()
    timing = load_check_timing(opts.check_timing)
    # What check_timing's recorder and checker read of their options.
    opts.scenario, opts.env, opts.expect_wrap = 'sycl', [], False
    if not shutil.which('babeltrace2'):
        print('harness: babeltrace2 not found', file=sys.stderr)
        sys.exit(HARNESS_ERROR)

    work = tempfile.mkdtemp(prefix='check-modern-')
    try:
        trace_dir = os.path.join(work, 'trace')
        truth = os.path.join(work, 'truth.jsonl')
        report = os.path.join(work, 'report.txt')
        result = timing.record(opts, trace_dir, truth, report)
        print(result.stdout, end='')
        if result.returncode != 0:
            timing.fail([f'traced program exited with {result.returncode}'])
        errors = []
        events = timing.parse_trace(trace_dir)
        own = split_report(report)
        timing.check(opts, events, timing.read_report(report), timing.read_truth(truth), errors)
        check_extensions(events, own, opts.shim, opts.sim, errors)
        check_semaphores(events, errors)
        check_tally(opts.merge, trace_dir, errors)

        env = untraced_env(timing.program_env(opts, truth), opts.shim)
        result = subprocess.run([opts.program, opts.scenario, report], env=env,
                                timeout=timing.RUN_TIMEOUT_S, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            errors.append(f'untraced program exited with {result.returncode}: {result.stdout}')
        else:
            untraced = split_report(report)
            # Untraced, the lookup gives the loader's function (the 1.20 loader hands back its
            # own for the names it knows) or the driver's; never the shim.
            for name, where in untraced['extension'].items():
                if os.path.realpath(where) == os.path.realpath(opts.shim):
                    errors.append(f'untraced, {name} is in the shim')
            if os.path.realpath(untraced['extension'].get(UNKNOWN, '')) != \
                    os.path.realpath(opts.sim):
                errors.append(f'untraced, {UNKNOWN} is not the driver\'s')
            properties = {0: {'kernel_timestamp_valid_bits': 32}}
            timing.check_app_timestamps(timing.read_report(report)['app_ts'],
                                        timing.read_truth(truth), properties, errors, None)
        if errors:
            timing.fail(errors)
        print(f'ok modern_sycl: {len(events)} events checked')
    finally:
        if opts.keep:
            shutil.rmtree(opts.keep, ignore_errors=True)
            shutil.copytree(work, opts.keep)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
