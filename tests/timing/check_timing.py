#!/usr/bin/env python3
"""check_timing.py: run one device-timing scenario traced, and check the trace against the truth.

Usage: check_timing.py --program P --scenario S --shim SHIM --sim LIBZESIM --record RECORD
                       [--env K=V ...] [--expect-wrap] [--no-profile] [--keep DIR]

Records the scenario program (tests/timing/timing_scenarios.c) under the zeprof shim on the
simulated device with tests/harness/record (a private LTTng session daemon, blocking channel),
with the simulated device's truth file, then reads the trace with `babeltrace2 --clock-cycles` (LTTng's monotonic clock in cycles is
CLOCK_MONOTONIC in ns, the truth's clock) and checks:
- one device_properties per device before anything else of it; anchors with results 0;
- exactly one device_timing per (call_id, execution), each with its `append`; the expected count,
  lost count and executions (1..N per append) the program reported;
- each read timing, unwrapped against its truncated bits (an immediate list's: the first candidate
  after its append, a regular list's: the last before its read) and converted to host time with the
  tightest sample of the nearest anchor, is the truth of one executed command of its kind within
  the published uncertainty (anchor half-width + one tick) plus one tick of truncation;
- every kernel, copy and fill the device executed was measured exactly once;
- `marker`: all timings precede the marker call (completion was seen by polling only);
- `app_ts`: what the application read from its own timestamp events is its kernel's truth, and
  the tracer reported the same values;
- the program also runs untraced: it must pass its own checks there too and read its kernels'
  truth from its timestamp events.
With --direct, only runs the program under the shim (no recording, no checks) and passes its
exit status on (the memory test).
Exit 0 on success, 1 with "not ok - ..." lines otherwise, 99 when the recording could not be set up,
77 (skipped) when the program exits 77 after saying why.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import json

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
import checks  # noqa: E402

HARNESS_ERROR = 99
SKIPPED = 77
RUN_TIMEOUT_S = 120

LINE_RE = re.compile(r'^\[(\d+)\] \([^)]*\) \S+ (\w+):(\w+): (.*)$')
FIELD_RE = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|0x[0-9A-Fa-f]+|-?\d+)')


def fail(messages):
    """Every error of the run as a failed check (tests/harness/checks.py), then exit 1."""
    for message in messages:
        checks.check(False, message)
    sys.exit(checks.exit_status())


def run(cmd, env=None, timeout=60, check=True):
    result = subprocess.run(cmd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if check and result.returncode != 0:
        print(f'harness: {" ".join(cmd)} failed ({result.returncode}): {result.stdout}',
              file=sys.stderr)
        sys.exit(HARNESS_ERROR)
    return result


def record(opts, trace_dir, truth, report):
    """Record the program with the shared harness: tests/harness/record gives it a private
    LTTng session daemon (own mount namespace, /run, /dev/shm and LTTNG_HOME as root) and a
    blocking per-UID channel, so no event is discarded."""
    env = program_env(opts, truth)
    cmd = [opts.record, '--blocking', trace_dir, '--', 'env', f'LD_PRELOAD={opts.shim}',
           opts.program, opts.scenario, report]
    result = subprocess.run(cmd, env=env, timeout=RUN_TIMEOUT_S, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode == HARNESS_ERROR:
        print(f'harness: recording failed: {result.stdout}', file=sys.stderr)
        sys.exit(HARNESS_ERROR)
    return result


def program_env(opts, truth):
    env = dict(os.environ)
    env.pop('LD_PRELOAD', None)
    env.update(ZE_ENABLE_ALT_DRIVERS=opts.sim, ZESIM_TRUTH=truth)
    for pair in opts.env:
        key, value = pair.split('=', 1)
        env[key] = value
    return env


def parse_trace(trace_dir):
    text = run(['babeltrace2', '--clock-cycles', trace_dir], timeout=300).stdout
    events = []
    for line in text.splitlines():
        m = LINE_RE.match(line)
        if not m:
            continue
        ts, provider, name, rest = m.groups()
        fields = {}
        for key, value in FIELD_RE.findall(rest):
            if value.startswith('"'):
                fields[key] = value[1:-1]
            elif value.startswith('0x'):
                fields[key] = int(value, 16)
            else:
                fields[key] = int(value)
        events.append((int(ts), provider, name, fields))
    return events


def read_report(path):
    expected = {'timings': None, 'lost': 0, 'lost_max': None, 'executions': None, 'marker': 0,
                'app_ts': []}
    with open(path) as report:
        for line in report:
            words = line.split()
            if not words:
                continue
            if words[0] == 'app_ts':
                expected['app_ts'].append(tuple(int(w) for w in words[1:5]))
            else:
                expected[words[0]] = int(words[1])
    return expected


def read_truth(path):
    with open(path) as truth:
        return [json.loads(line) for line in truth if line.strip()]


# The truth's kind for each kind of append (ranges barriers and barriers run as barriers).
TRUTH_KIND = {'kernel': 'kernel', 'copy': 'copy', 'copy_region': 'copy_region', 'fill': 'fill',
              'barrier': 'barrier', 'ranges_barrier': 'barrier', 'signal': 'signal',
              'image_copy': 'image_copy', 'timestamps': 'query_timestamps'}
# Appends the engine knows only by their function's name (kind 'append', generic hooks).
TRUTH_KIND_BY_NAME = {'zeCommandListAppendSignalExternalSemaphoreExt': 'semaphore_signal',
                      'zeCommandListAppendWaitExternalSemaphoreExt': 'semaphore_wait'}
MEASURED_KINDS = ('kernel', 'copy', 'copy_region', 'fill')
# |measured - truth| of every matched timing, for the summary line (not a pass criterion).
ACCURACY = {'duration': [], 'start': []}
# Immediate timings read more than a wrap after their append (several candidates fit).
AMBIGUOUS = []


class Anchors:
    """Per device: [(anchor_ns, anchor_ticks, uncertainty_ns)] from the tightest sample."""

    def __init__(self, events, properties, errors):
        samples = {}
        for ts, provider, name, f in events:
            if provider != 'zeprof_device' or name not in ('clock_sample_begin',
                                                           'clock_sample_end'):
                continue
            key = (f['device'], f['anchor'], f['sample'])
            entry = samples.setdefault(key, {})
            if name == 'clock_sample_begin':
                entry['begin'] = ts
            else:
                entry['end'] = ts
                entry['ticks'] = f['device_ticks']
                if f['result'] != 0:
                    errors.append(f'anchor sample failed: {f}')
        best = {}
        for (device, anchor, _), s in samples.items():
            if 'begin' not in s or 'end' not in s or s['end'] < s['begin']:
                errors.append(f'unpaired clock sample: device={device:#x} anchor={anchor}')
                continue
            width = s['end'] - s['begin']
            if (device, anchor) not in best or width < best[(device, anchor)][0]:
                best[(device, anchor)] = (width, s)
        self.by_device = {}
        for (device, _), (width, s) in best.items():
            hz = properties[device]['timer_hz']
            tick_ns = 1e9 / hz
            self.by_device.setdefault(device, []).append(
                (s['begin'] + width / 2.0, s['ticks'], width / 2.0 + tick_ns))
        for anchors in self.by_device.values():
            anchors.sort()

    def nearest(self, device, ns):
        return min(self.by_device[device], key=lambda a: abs(a[0] - ns))


def unwrap(value, bits, reference):
    """The largest x <= reference with x = value (mod 2^bits)."""
    modulus = 1 << bits
    if bits >= 64:
        return value
    x = reference - ((reference - value) % modulus)
    return x


def unwrap_after(value, bits, reference):
    """The smallest x >= reference with x = value (mod 2^bits)."""
    if bits >= 64:
        return value
    return reference + ((value - reference) % (1 << bits))


def check(opts, events, expected, truth, errors):
    properties = {}
    first_use = {}
    for ts, provider, name, f in events:
        if provider != 'zeprof_device':
            continue
        device = f.get('device')
        if name == 'device_properties':
            if device in properties:
                errors.append(f'device_properties twice for device {device:#x}')
            properties[device] = f
            if device in first_use:
                errors.append(f'device_properties after other events of device {device:#x}')
        elif device is not None:
            first_use.setdefault(device, ts)
    for device in first_use:
        if device not in properties:
            errors.append(f'no device_properties for device {device:#x}')
    if errors:
        return
    anchors = Anchors(events, properties, errors)

    appends = {}
    timings = {}
    marker_ts = None
    for ts, provider, name, f in events:
        if provider == 'zeprof_ze' and marker_ts is None:
            # The marker call is one event (docs/tracepoints.md): its start, on the same clock.
            if name in ('zeDriverGetApiVersion_call', 'zeDriverGetApiVersion_call_full'):
                marker_ts = f['call_start']
            elif name == 'zeDriverGetApiVersion_entry':
                marker_ts = ts
        if provider != 'zeprof_device':
            continue
        if name == 'append':
            if f['call_id'] in appends:
                errors.append(f'append call_id {f["call_id"]} twice')
            appends[f['call_id']] = dict(f, append_ts=ts)
        elif name == 'device_timing':
            key = (f['call_id'], f['execution'])
            if key in timings:
                errors.append(f'two device_timing for call_id={key[0]} execution={key[1]}')
            timings[key] = (ts, f)

    if expected['timings'] is not None and len(timings) != expected['timings']:
        errors.append(f'device_timing records: got {len(timings)}, expected {expected["timings"]}')
    lost = [f for _, f in timings.values() if f['status'] != 0]
    if expected['lost_max'] is not None:
        if len(lost) > expected['lost_max']:
            errors.append(f'lost timings: got {len(lost)}, expected at most '
                          f'{expected["lost_max"]}')
    elif len(lost) != expected['lost']:
        errors.append(f'lost timings: got {len(lost)}, expected {expected["lost"]}')
    for (call_id, execution), (_, f) in timings.items():
        if call_id not in appends:
            errors.append(f'device_timing call_id={call_id} has no append')
        elif f.get('vpid') != appends[call_id].get('vpid'):
            # A forked child must never report (drain) its parent's appends.
            errors.append(f'device_timing call_id={call_id} execution={execution} from pid '
                          f'{f.get("vpid")}, its append from pid {appends[call_id].get("vpid")}')
    timed = {call_id for call_id, _ in timings}
    for call_id, append in appends.items():
        if call_id not in timed:
            errors.append(f'append call_id={call_id} ({append["name"]}) has no device_timing')
    if expected['executions'] is not None:
        per_call = {}
        for call_id, execution in timings:
            per_call.setdefault(call_id, set()).add(execution)
        want = set(range(1, expected['executions'] + 1))
        for call_id, executions in per_call.items():
            if executions != want:
                errors.append(f'call_id={call_id}: executions {sorted(executions)}, '
                              f'expected {sorted(want)}')
    if expected['marker']:
        if marker_ts is None:
            errors.append('marker call not in the trace')
        else:
            late = [key for key, (ts, _) in timings.items() if ts > marker_ts]
            if late:
                errors.append(f'{len(late)} timings only after the marker (not drained by '
                              f'the poll): {late[:5]}')

    # Match each read timing with the truth.
    by_ticks = {}   # (kind, truncation bits, start, end) -> truth line indexes
    for index, line in enumerate(truth):
        for bits in {p['kernel_timestamp_valid_bits'] for p in properties.values()}:
            modulus = 1 << bits
            key = (line['kind'], bits, line['start_ticks'] % modulus, line['end_ticks'] % modulus)
            by_ticks.setdefault(key, []).append(index)
    used = set()
    spans = {}
    matched_kinds = {}
    for (call_id, execution), (ts, f) in sorted(timings.items(), key=lambda item: item[1][0]):
        if f['status'] != 0 or call_id not in appends:
            continue
        device = f['device']
        bits = properties[device]['kernel_timestamp_valid_bits']
        hz = properties[device]['timer_hz']
        tick_ns = 1e9 / hz
        anchor_ns, anchor_ticks, uncertainty = anchors.nearest(device, ts)
        append = appends[call_id]
        candidates = None
        if execution == 0:
            # An immediate list's command runs between its append and its read; both bound it
            # (the `append` event is emitted in the call after the driver returned: the start
            # may precede it by the call's own duration, an eighth of a wrap covers that even
            # preempted). The read may come more than a wrap after the start (the program
            # synchronizes when it likes; on a loaded machine its thread and the device's run
            # late): then more than one candidate fits, which no reader can tell apart, and the
            # one nearest the truth is checked (counted in the ok line). None fitting: wrong.
            period = 1 << bits
            low = int(anchor_ticks + (append['append_ts'] - anchor_ns) * hz / 1e9 -
                      period / 8 - uncertainty * hz / 1e9 - 2)
            high = int(anchor_ticks + (ts - anchor_ns) * hz / 1e9 + uncertainty * hz / 1e9 + 2)
            duration = (f['global_end'] - f['global_start']) % period
            candidates = []
            start_ticks = unwrap_after(f['global_start'], bits, low)
            while start_ticks + duration <= high:
                candidates.append(start_ticks)
                start_ticks += period
            if not candidates:
                errors.append(f'call_id={call_id}: its ticks fit no time between its append and '
                              f'its read {f}')
                continue
            start_ticks = candidates[0]
            end_ticks = start_ticks + duration
        else:
            # A regular list's execution may come long after its append: the read, which
            # follows the end, is the reference (known limit: the test synchronizes each
            # execution, docs/timing.md).
            reference = int(anchor_ticks + (ts - anchor_ns) * hz / 1e9 +
                            uncertainty * hz / 1e9 + 2)
            end_ticks = unwrap(f['global_end'], bits, reference)
            start_ticks = unwrap(f['global_start'], bits, end_ticks)
        start_ns = anchor_ns + (start_ticks - anchor_ticks) * 1e9 / hz
        end_ns = anchor_ns + (end_ticks - anchor_ticks) * 1e9 / hz
        low, high = spans.get(device, (start_ticks, end_ticks))
        spans[device] = (min(low, start_ticks), max(high, end_ticks))
        kind = TRUTH_KIND.get(append['kind'], append['kind'])
        if kind == 'append':
            kind = TRUTH_KIND_BY_NAME.get(append['name'], kind)
        tolerance = uncertainty + 2 * tick_ns
        best = None
        for index in by_ticks.get((kind, bits, f['global_start'], f['global_end']), []):
            line = truth[index]
            if index in used:
                continue
            if kind == 'kernel' and line['name'] != append['name']:
                continue
            distance = abs(line['start_ns'] - start_ns)
            if best is None or distance < best[0]:
                best = (distance, index)
        if best is None:
            errors.append(f'call_id={call_id} execution={execution} ({append["kind"]} '
                          f'{append["name"]}): no executed {kind} has these ticks {f}')
            continue
        used.add(best[1])
        line = truth[best[1]]
        if candidates and len(candidates) > 1:
            AMBIGUOUS.append(call_id)
            start_ticks = min(candidates, key=lambda c: abs(
                anchor_ns + (c - anchor_ticks) * 1e9 / hz - line['start_ns']))
            end_ticks = start_ticks + (end_ticks - candidates[0])
            start_ns = anchor_ns + (start_ticks - anchor_ticks) * 1e9 / hz
            end_ns = anchor_ns + (end_ticks - anchor_ticks) * 1e9 / hz
        matched_kinds[kind] = matched_kinds.get(kind, 0) + 1
        ACCURACY['duration'].append(abs((end_ns - start_ns) - (line['end_ns'] - line['start_ns'])))
        ACCURACY['start'].append(abs(start_ns - line['start_ns']))
        for what, got, want in (('start', start_ns, line['start_ns']),
                                ('end', end_ns, line['end_ns'])):
            if abs(got - want) > tolerance:
                errors.append(f'call_id={call_id} execution={execution}: {what} {got:.0f} ns '
                              f'is {got - want:+.0f} ns from the truth (allowed {tolerance:.0f})')
        if end_ns > ts + tolerance:
            errors.append(f'call_id={call_id} execution={execution}: read at {ts} ns, before '
                          f'its end {end_ns:.0f} ns')
    # Every kernel, copy and fill executed was measured once (the lost ones excepted).
    executed = sum(1 for line in truth if line['kind'] in MEASURED_KINDS)
    measured = sum(matched_kinds.get(kind, 0) for kind in MEASURED_KINDS)
    if executed != measured + len(lost):
        errors.append(f'{executed} kernels, copies and fills executed, {measured} measured and '
                      f'{len(lost)} lost')
    if opts.expect_wrap:
        for device, (low, high) in spans.items():
            bits = properties[device]['kernel_timestamp_valid_bits']
            if high - low < (1 << bits):
                errors.append(f'no wrap-around exercised: span {high - low} ticks < 2^{bits}')

    check_app_timestamps(expected['app_ts'], truth, properties, errors,
                         [f for _, f in timings.values() if f['status'] == 0])


def check_app_timestamps(app_ts, truth, properties, errors, read_timings):
    if not app_ts:
        return
    bits = next(iter(properties.values()))['kernel_timestamp_valid_bits'] if properties else 64
    modulus = 1 << bits
    kernels = {(line['start_ticks'] % modulus, line['end_ticks'] % modulus)
               for line in truth if line['kind'] == 'kernel'}
    for gs, ge, cs, ce in app_ts:
        if (gs, ge) not in kernels:
            errors.append(f'the application read {gs}..{ge}: not one of its kernels')
        if read_timings is not None and not any(
                (f['global_start'], f['global_end'], f['context_start'], f['context_end']) ==
                (gs, ge, cs, ce) for f in read_timings):
            errors.append(f'the tracer did not report what the application read: {gs}..{ge}')


def check_no_profile(events, errors):
    # zeprof_device:process (the process name) is not device work: recorded whatever ZEPROF_PROFILE.
    device = [e for e in events if e[1] == 'zeprof_device' and e[2] != 'process']
    calls = [e for e in events if e[1] == 'zeprof_ze']
    if device:
        errors.append(f'ZEPROF_PROFILE=0 but {len(device)} zeprof_device events')
    if not calls:
        errors.append('no API events: the shim did not trace at all')


def run_direct(opts):
    env = program_env(opts, '')
    env.pop('ZESIM_TRUTH')
    env['LD_PRELOAD'] = opts.shim
    cmd = [opts.program] + ([opts.scenario] if opts.scenario else [])
    result = subprocess.run(cmd, env=env, timeout=RUN_TIMEOUT_S, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    print(result.stdout, end='')
    sys.exit(result.returncode)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--program', required=True)
    parser.add_argument('--scenario', default='')
    parser.add_argument('--shim', required=True)
    parser.add_argument('--sim', required=True)
    parser.add_argument('--record', help='tests/harness/record')
    parser.add_argument('--direct', action='store_true',
                        help='run PROGRAM [SCENARIO] under the shim only, no recording')
    parser.add_argument('--env', action='append', default=[])
    parser.add_argument('--expect-wrap', action='store_true')
    parser.add_argument('--no-profile', action='store_true',
                        help='run with ZEPROF_PROFILE=0: no zeprof_device event at all')
    parser.add_argument('--keep')
    opts = parser.parse_args()
    if opts.no_profile:
        opts.env.append('ZEPROF_PROFILE=0')
    if opts.direct:
        run_direct(opts)
    if not opts.record or not opts.scenario:
        parser.error('--record and --scenario are required unless --direct')
    for tool in ('babeltrace2', opts.record):
        if not shutil.which(tool):
            print(f'harness: {tool} not found', file=sys.stderr)
            sys.exit(HARNESS_ERROR)

    work = tempfile.mkdtemp(prefix='check-timing-')
    try:
        trace_dir = os.path.join(work, 'trace')
        truth = os.path.join(work, 'truth.jsonl')
        report = os.path.join(work, 'report.txt')
        result = record(opts, trace_dir, truth, report)
        print(result.stdout, end='')
        if result.returncode == SKIPPED:
            sys.exit(SKIPPED)  # the program said why
        if result.returncode != 0:
            fail([f'traced program exited with {result.returncode}'])
        errors = []
        events = parse_trace(trace_dir)
        expected = read_report(report)
        if opts.no_profile:
            check_no_profile(events, errors)
        else:
            check(opts, events, expected, read_truth(truth), errors)
        # The application's view untraced: the same program, its own checks (events signalled,
        # copies and fills landed, no hang) and what it reads from its timestamp events.
        if not opts.no_profile:
            env = program_env(opts, truth)
            result = subprocess.run([opts.program, opts.scenario, report], env=env,
                                    timeout=RUN_TIMEOUT_S, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                errors.append(f'untraced program exited with {result.returncode}: '
                              f'{result.stdout}')
            else:
                untraced = read_report(report)
                properties = {0: {'kernel_timestamp_valid_bits': opts_bits(opts)}}
                check_app_timestamps(untraced['app_ts'], read_truth(truth), properties, errors,
                                     None)
        if errors:
            fail(errors)
        summary = ''
        if ACCURACY['duration']:
            summary = (f', median |duration - truth| {median(ACCURACY["duration"]):.1f} ns, '
                       f'median |start - truth| {median(ACCURACY["start"]):.1f} ns')
        if AMBIGUOUS:
            summary += (f', {len(AMBIGUOUS)} read more than a wrap after their append '
                        f'(several candidates)')
        print(f'ok {opts.scenario}: {len(events)} events checked{summary}')
    finally:
        if opts.keep:
            shutil.rmtree(opts.keep, ignore_errors=True)
            shutil.copytree(work, opts.keep)
        shutil.rmtree(work, ignore_errors=True)


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def opts_bits(opts):
    for pair in opts.env:
        key, value = pair.split('=', 1)
        if key == 'ZESIM_KERNEL_TS_BITS':
            return int(value)
    return 32


if __name__ == '__main__':
    main()
