#!/usr/bin/env python3
"""What a zeprof run costs besides the program's own calls, and whether it loses events.

    fixed_cost.py ZEPROF APP

Run inside tests/harness/with-lttng --no-daemon (meson's benchmark does), with
ZE_ENABLE_ALT_DRIVERS naming the simulated device. APP is tests/e2e's e2e_app. Prints, in one run:

- the fixed cost of a run, cold (no session daemon up) and warm (an idle daemon of a previous run
  waiting): wall time of `zeprof APP loop LOG 1` (one call) minus the same program untraced, with
  and without the analysis; the median of ROUNDS runs each;
- events lost in the default (lossless) mode by a program calling as fast as it can (must be 0),
  and what --discard loses with the same program;
- what the blocking default costs such a program beyond the events themselves: its added time per
  call blocking (the slope between a run of CALLS calls and a run of one, so that the noisy fixed
  cost cancels out), divided by the same with --discard (which never waits). About 1 means the
  channel is large enough for the consumer to keep up.

Nothing is asserted: the machine is shared and noisy; the figures are for the reader.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = 5
CALLS = 400000
IDLE_S = '60'


def timed(command, env=None):
    start = time.monotonic()
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - start
    if completed.returncode != 0:
        sys.exit(f'fixed_cost: {command[0]} failed: {completed.stderr.strip()[-300:]}')
    return elapsed, completed


def state_dir():
    if os.geteuid() == 0:
        return '/var/run/zeprof/daemons'
    return os.path.join(os.environ.get('TMPDIR', '/tmp'), f'zeprof-{os.geteuid()}', 'daemons')


def idle_slots():
    base = state_dir()
    if not os.path.isdir(base):
        return []
    return [name for name in os.listdir(base)
            if os.path.exists(os.path.join(base, name, 'idle'))]


def wait_idle(count):
    """Until `count` daemons wait idle (a run's finisher destroys its session in the background)."""
    deadline = time.monotonic() + 60
    while len(idle_slots()) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: fixed_cost.py ZEPROF APP')
    zeprof, app = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix='zeprof-fixed-cost-')
    log = os.path.join(work, 'app.log')
    # Untraced must mean untraced: meson puts the build's library directories on LD_LIBRARY_PATH,
    # and the shim is build/interposer/libze_loader.so.1. Nor its MALLOC_PERTURB_ (every malloc
    # and free would fill memory), for either side.
    base = dict(os.environ)
    base.pop('MALLOC_PERTURB_', None)
    shim_dir = os.path.realpath(os.path.join(os.path.dirname(zeprof), 'interposer'))
    untraced_env = dict(base, LD_LIBRARY_PATH=':'.join(
        d for d in base.get('LD_LIBRARY_PATH', '').split(':')
        if d and os.path.realpath(d) != shim_dir))
    keep = dict(base, ZEPROF_DAEMON_IDLE=IDLE_S)
    none_kept = dict(base, ZEPROF_DAEMON_IDLE='0')
    counter = iter(range(1000000))

    def run_traced(options, env):
        return timed([zeprof] + options + ['-o', os.path.join(work, f't{next(counter)}'), '--',
                                           app, 'loop', log, '1'], env)[0]

    untraced = statistics.median(timed([app, 'loop', log, '1'], untraced_env)[0]
                                 for _ in range(ROUNDS))
    untraced_long = statistics.median(timed([app, 'loop', log, str(CALLS)], untraced_env)[0]
                                      for _ in range(3))
    untraced_per_call = max(untraced_long - untraced, 0) / CALLS
    figures = {}
    for label, options in [('record only', ['--no-analysis']), ('with analysis', [])]:
        cold, warm = [], []
        for _ in range(ROUNDS):
            # No idle daemon: a run that keeps none stops the idle ones (not timed).
            run_traced(['--no-analysis'], none_kept)
            cold.append(run_traced(options, keep) - untraced)
            wait_idle(1)
            warm.append(run_traced(options, keep) - untraced)
            wait_idle(1)
        figures[label] = (statistics.median(cold), statistics.median(warm))
    run_traced(['--no-analysis'], none_kept)

    print(f'untraced program (one call): {untraced:.3f} s')
    for label, (cold, warm) in figures.items():
        print(f'fixed cost of a run, {label}: cold {cold:.3f} s, warm {warm:.3f} s '
              f'(goals: 0.4 s cold, 0.15 s warm)')

    # A program calling as fast as it can: lossless by default, and at what price. The added time
    # per call is the slope between a run of CALLS calls and a run of one (both warm, alternating,
    # medians), so that the fixed cost, noisy here, cancels out.
    lost = {}
    per_call = {}
    for label, options in [('default', []), ('--discard', ['--discard'])]:
        long_runs, short_runs = [], []
        for round_index in range(3):
            trace = os.path.join(work, f'loop-{label.strip("-")}-{round_index}')
            long_runs.append(timed([zeprof, '--no-analysis', '--no-profile'] + options +
                                   ['-o', trace, '--', app, 'loop', log, str(CALLS)], keep)[0])
            wait_idle(1)
            short_runs.append(run_traced(['--no-analysis', '--no-profile'] + options, keep))
            wait_idle(1)
            if round_index == 0:
                _, completed = timed([zeprof, '-r', '-j', trace])
                tally = json.loads(completed.stdout)
                anomalies = tally.get('anomalies', {})
                lost[label] = (anomalies.get('discarded_events', 0) +
                               anomalies.get('discarded_packets', 0))
                calls = sum(row.get('calls', 0) for row in tally.get('api', [])
                            if row.get('name') == 'zeDriverGet')
        per_call[label] = (statistics.median(long_runs) - statistics.median(short_runs)) / CALLS
        print(f'{label}: {CALLS} calls as fast as possible: {calls} traced, events lost '
              f'{lost[label]}, {per_call[label] * 1e9:.0f} ns per call (untraced '
              f'{untraced_per_call * 1e9:.0f} ns)')
    run_traced(['--no-analysis'], none_kept)
    print(f'events lost in the default mode: {lost["default"]} (must be 0)')
    if per_call['--discard'] > untraced_per_call:
        ratio = (per_call['default'] - untraced_per_call) / (per_call['--discard'] - untraced_per_call)
        print(f'blocking cost beyond the events: {ratio:.2f}x the added time per call of --discard '
              f'(1.0: the program never waits for space)')
    with open('/proc/loadavg') as load:
        print(f'machine load: {load.read().split()[0]} (1 min), {os.cpu_count()} CPUs')
    subprocess.run(['rm', '-rf', work], check=False)
    return 0


if __name__ == '__main__':
    sys.exit(main())
