#!/usr/bin/env python3
"""Run each of our programs untraced, then under zeprof, and hold the two runs to the promise that
the shim never harms the application: the same exit status and the same stdout. Then check that
the recording is analysable (the program must pass untraced, exit 0): zeprof-merge -j reads it
(exit 0), finds the program's process(es) and, unless --no-api, its Level Zero calls; when no event
was discarded, every call has its entry and its exit (no orphan exit, no synthetic close).

usage: with-lttng --no-daemon -- same_traced.py CASE...
  CASE: NAME [--no-api] [--env NAME=VALUE]... [--mask REGEX]... -- COMMAND [ARG...] ';'

--mask REGEX: text of stdout that legitimately differs under a tracer (a program that prints its
own heap use) is replaced by "<masked>" in both runs before they are compared.

In COMMAND and its arguments, @TMP@ stands for a fresh directory of each run (for files a program
writes) and @PORT@ for a free TCP port of each run. The traced run is
  zeprof --no-analysis -o DIR -- COMMAND...
with paths from the environment: SAME_ZEPROF (build/zeprof), SAME_MERGE (build/zeprof-merge).
The cases run one after the other inside one with-lttng (tests/harness): each zeprof run gets
the session daemon the previous one left idle (ZEPROF_DAEMON_IDLE, zeprof's warm reuse), never
shared by two runs, so a case costs its programs' own time rather than a daemon's start and stop.
At the end the idle daemon must stop by itself (its keeper) and leave no LTTng process behind.
SAME_ONLY=REGEX runs only the cases whose name it matches.
Exit status: 0 pass, 1 fail (each check is printed, prefixed by its case's name), 77 when every
case skipped itself.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status, lttng_processes_left  # noqa: E402

RUN_TIMEOUT_S = 120
SKIP = 77  # meson's skip status
# How long the last idle daemon may take to stop once ZEPROF_DAEMON_IDLE has passed (its keeper
# looks every second; a loaded machine is slow).
DAEMON_STOP_SLACK_S = 30


class Case:
    def __init__(self, name):
        self.name, self.expect_api, self.env, self.masks, self.command = name, True, {}, [], []


def parse_cases(arguments):
    """CASE... as documented above; None on a malformed list."""
    cases = []
    while arguments:
        case = Case(arguments.pop(0))
        while arguments and arguments[0] != '--':
            option = arguments.pop(0)
            if option == '--no-api':
                case.expect_api = False
            elif option == '--mask' and arguments:
                case.masks.append(re.compile(arguments.pop(0)))
            elif option == '--env' and arguments:
                name, _, value = arguments.pop(0).partition('=')
                case.env[name] = value
            else:
                return None
        if not arguments:
            return None
        arguments.pop(0)
        while arguments and arguments[0] != ';':
            case.command.append(arguments.pop(0))
        if not arguments or not case.command:
            return None
        arguments.pop(0)
        cases.append(case)
    return cases


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return str(s.getsockname()[1])


def substituted(command, work):
    port = free_port()
    return [arg.replace('@TMP@', work).replace('@PORT@', port) for arg in command]


def run(command, env):
    try:
        return subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as expired:
        check(False, f'{command[0]} ends within {RUN_TIMEOUT_S} s', 'a hang')
        return subprocess.CompletedProcess(command, -1, expired.stdout or '', expired.stderr or '')


def run_case(case, base_env):
    """Returns False when the program skips itself untraced."""
    name = case.name
    zeprof, merge = os.environ['SAME_ZEPROF'], os.environ['SAME_MERGE']
    env = dict(base_env, **case.env)
    with tempfile.TemporaryDirectory() as work:
        os.mkdir(os.path.join(work, 'plain'))
        os.mkdir(os.path.join(work, 'traced'))
        trace = os.path.join(work, 'trace')
        plain = run(substituted(case.command, os.path.join(work, 'plain')), env)
        if plain.returncode == SKIP:
            # The program skips itself here (e.g. a scenario the sanitizer build cannot run).
            print(f'# {name}: SKIP, the program skips untraced: {plain.stdout.strip()[-300:]}')
            return False
        traced = run([zeprof, '--no-analysis', '-o', trace, '--'] +
                     substituted(case.command, os.path.join(work, 'traced')), env)
        print(f'# {name}: untraced: exit {plain.returncode}, {len(plain.stdout.splitlines())} '
              f'lines; traced: exit {traced.returncode}, {len(traced.stdout.splitlines())} lines')
        # Our programs pass their own checks untraced; anything else is a broken test setup.
        check(plain.returncode == 0, f'{name}: the program passes untraced',
              f'exit {plain.returncode}: {plain.stderr.strip()[-1500:]}')
        check(traced.returncode == plain.returncode,
              f'{name}: the same exit status under zeprof',
              f'{plain.returncode} untraced, {traced.returncode} under zeprof\n'
              f'untraced stderr: {plain.stderr.strip()[-1500:]}\n'
              f'traced stderr: {traced.stderr.strip()[-1500:]}')
        for mask in case.masks:
            plain.stdout = mask.sub('<masked>', plain.stdout)
            traced.stdout = mask.sub('<masked>', traced.stdout)
        check(traced.stdout == plain.stdout, f'{name}: the same stdout under zeprof',
              f'\n--- untraced\n{plain.stdout[-2000:]}\n--- under zeprof\n{traced.stdout[-2000:]}')
        if not check(os.path.isdir(trace), f'{name}: a trace is written',
                     traced.stderr.strip()[-1500:]):
            return True
        merged = run([merge, '-j', trace], env)
    if not check(merged.returncode == 0, f'{name}: zeprof-merge -j reads the trace',
                 merged.stderr.strip()):
        return True
    try:
        tally = json.loads(merged.stdout)
    except json.JSONDecodeError as error:
        check(False, f'{name}: zeprof-merge -j writes JSON', str(error))
        return True
    calls = sum(row['calls'] for row in tally['api'])
    anomalies = {k: v for k, v in tally['anomalies'].items() if v}
    print(f'# {name}: trace: {tally["processes"]} process(es), {calls} API calls, '
          f'{sum(row["calls"] for row in tally["device"])} device timings, anomalies {anomalies}')
    check(tally['processes'] >= 1, f'{name}: the program\'s process is in the trace')
    if case.expect_api:
        check(calls > 0, f'{name}: its Level Zero calls are in the trace')
    if tally['anomalies'].get('discarded_events', 0) == 0:
        check(tally['anomalies'].get('orphan_exits', 0) == 0 and
              tally['anomalies'].get('synthetic_closes', 0) == 0,
              f'{name}: every call has its entry and exit (nothing was discarded)',
              str(anomalies))
    return True


def check_no_daemon_left():
    """The warm daemon the last run left idle stops by itself; nothing of LTTng outlives it."""
    idle_s = float(os.environ.get('ZEPROF_DAEMON_IDLE', '60'))
    deadline = time.monotonic() + idle_s + DAEMON_STOP_SLACK_S
    left = lttng_processes_left()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = lttng_processes_left()
    if left is not None:
        check(not left, 'the idle session daemon stops by itself, leaving no LTTng process',
              str(left))


def main():
    cases = parse_cases(sys.argv[1:])
    if not cases:
        print(__doc__, file=sys.stderr)
        return 2
    only = re.compile(os.environ.get('SAME_ONLY', ''))
    cases = [case for case in cases if only.search(case.name)]
    with tempfile.TemporaryDirectory(prefix='same-traced-') as scratch:
        # zeprof's scratch files and, as a normal user, its daemons' state live in TMPDIR: a
        # private one keeps another test's daemons out of ours and out of the leftover count.
        os.chmod(scratch, 0o755)
        os.environ['TMPDIR'] = scratch
        # meson points LD_LIBRARY_PATH at build/interposer, where the shim is named like the
        # loader: an untraced run would get the shim anyway.
        base_env = {k: v for k, v in os.environ.items()
                    if k not in ('LD_PRELOAD', 'LD_LIBRARY_PATH', 'ZEPROF_LOADER')}
        ran = [case.name for case in cases if run_case(case, base_env)]
        print(f'# {len(ran)} of {len(cases)} programs ran traced and untraced')
        check_no_daemon_left()
    if cases and not ran:
        return SKIP
    return exit_status()


if __name__ == '__main__':
    sys.exit(main())
