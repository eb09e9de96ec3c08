#!/usr/bin/env python3
"""Run one of our programs untraced, then under zeprof, and hold the two runs to the promise that
the shim never harms the application: the same exit status and the same stdout. Then check that
the recording is analysable (the program must pass untraced, exit 0): zeprof-merge -j reads it (exit 0), finds the program's process(es)
and, unless --no-api, its Level Zero calls; when no event was discarded, every call has its entry
and its exit (no orphan exit, no synthetic close).

usage: same_traced.py [--no-api] [--env NAME=VALUE]... [--mask REGEX]... -- COMMAND [ARG...]

--mask REGEX: text of stdout that legitimately differs under a tracer (a program that prints its
own heap use) is replaced by "<masked>" in both runs before they are compared.

In COMMAND and its arguments, @TMP@ stands for a fresh directory of each run (for files a program
writes) and @PORT@ for a free TCP port of each run. The traced run is
  with-lttng --no-daemon -- zeprof --no-analysis -o DIR -- COMMAND...
with paths from the environment: SAME_ZEPROF (build/zeprof), SAME_MERGE (build/zeprof-merge) and
SAME_WITH_LTTNG (tests/harness/with-lttng), so zeprof starts its own, isolated, session daemon.
Exit status: 0 pass, 1 fail (each failed check is printed), 77 skip (LTTng not installed).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

RUN_TIMEOUT_S = 300
failures = []


SKIP = 77  # meson's skip status

def check(condition, message):
    if not condition:
        failures.append(message)
        print('FAIL: ' + message, file=sys.stderr)
    return condition


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
        check(False, f'timed out after {RUN_TIMEOUT_S} s (a hang): {command}')
        return subprocess.CompletedProcess(command, -1, expired.stdout or '', expired.stderr or '')


def main():
    arguments = sys.argv[1:]
    expect_api, extra_env, masks = True, {}, []
    while arguments and arguments[0] != '--':
        option = arguments.pop(0)
        if option == '--no-api':
            expect_api = False
        elif option == '--mask' and arguments:
            masks.append(re.compile(arguments.pop(0)))
        elif option == '--env' and arguments:
            name, _, value = arguments.pop(0).partition('=')
            extra_env[name] = value
        else:
            print(__doc__, file=sys.stderr)
            return 2
    command = arguments[1:]
    if not command:
        print(__doc__, file=sys.stderr)
        return 2
    if shutil.which('lttng-sessiond') is None:
        print('LTTng is not installed')
        return SKIP
    zeprof, merge = os.environ['SAME_ZEPROF'], os.environ['SAME_MERGE']
    with_lttng = os.environ['SAME_WITH_LTTNG']
    # meson points LD_LIBRARY_PATH at build/interposer, where the shim is named like the loader:
    # an untraced run would get the shim anyway.
    env = {k: v for k, v in os.environ.items()
           if k not in ('LD_PRELOAD', 'LD_LIBRARY_PATH', 'ZEPROF_LOADER')}
    env.update(extra_env)

    with tempfile.TemporaryDirectory() as work:
        os.mkdir(os.path.join(work, 'plain'))
        os.mkdir(os.path.join(work, 'traced'))
        trace = os.path.join(work, 'trace')
        plain = run(substituted(command, os.path.join(work, 'plain')), env)
        if plain.returncode == SKIP:
            # The program skips itself here (e.g. a scenario the sanitizer build cannot run).
            print(f'SKIP: the program skips untraced: {plain.stdout.strip()[-300:]}')
            return SKIP
        traced = run([with_lttng, '--no-daemon', '--', zeprof, '--no-analysis', '-o', trace,
                      '--'] + substituted(command, os.path.join(work, 'traced')), env)
        print(f'untraced: exit {plain.returncode}, {len(plain.stdout.splitlines())} lines; '
              f'traced: exit {traced.returncode}, {len(traced.stdout.splitlines())} lines')
        # Our programs pass their own checks untraced; anything else is a broken test setup.
        check(plain.returncode == 0,
              f'the program fails untraced ({plain.returncode}): {plain.stderr.strip()[-1500:]}')
        check(traced.returncode == plain.returncode,
              f'exit status {plain.returncode} untraced, {traced.returncode} under zeprof\n'
              f'untraced stderr: {plain.stderr.strip()[-1500:]}\n'
              f'traced stderr: {traced.stderr.strip()[-1500:]}')
        for mask in masks:
            plain.stdout = mask.sub('<masked>', plain.stdout)
            traced.stdout = mask.sub('<masked>', traced.stdout)
        check(traced.stdout == plain.stdout,
              f'stdout differs:\n--- untraced\n{plain.stdout[-2000:]}\n--- under zeprof\n'
              f'{traced.stdout[-2000:]}')
        if not os.path.isdir(trace):
            check(False, f'no trace written: {traced.stderr.strip()[-1500:]}')
            return 1
        merged = run([merge, '-j', trace], env)
    if not check(merged.returncode == 0, f'zeprof-merge -j fails: {merged.stderr.strip()}'):
        return 1
    try:
        tally = json.loads(merged.stdout)
    except json.JSONDecodeError as error:
        check(False, f'zeprof-merge -j wrote invalid JSON: {error}')
        return 1
    calls = sum(row['calls'] for row in tally['api'])
    anomalies = {k: v for k, v in tally['anomalies'].items() if v}
    print(f'trace: {tally["processes"]} process(es), {calls} API calls, '
          f'{sum(row["calls"] for row in tally["device"])} device timings, anomalies {anomalies}')
    check(tally['processes'] >= 1, 'no process in the trace')
    if expect_api:
        check(calls > 0, 'no Level Zero call in the trace')
    if tally['anomalies'].get('discarded_events', 0) == 0:
        check(tally['anomalies'].get('orphan_exits', 0) == 0 and
              tally['anomalies'].get('synthetic_closes', 0) == 0,
              f'calls without entry or exit although nothing was discarded: {anomalies}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
