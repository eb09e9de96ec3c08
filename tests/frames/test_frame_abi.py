#!/usr/bin/env python3
"""The frame API as a binary interface: a program that does not include zeprof.h marks frames
through the functions the shim exports. Untraced it runs and marks nothing (stderr says "shim
absent"); under the shim its marks are in the trace with their key (session, worker, sequence)
and status, in order, each exactly once; stdout and the exit status are the same both ways.

usage: test_frame_abi.py RECORD SHIM CASE COMMAND [ARG...]
  weak    COMMAND is frames_weak (C, weak declarations)
  ctypes  COMMAND runs frames_ctypes.py (Python ctypes)
  mixed   COMMAND is frames_mixed: weak declarations and zeprof.h in one program, built at -O0
          with --export-dynamic; the header's inline functions are local symbols of the program,
          absent from its dynamic symbols, and both kinds of marks reach the shim once each.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402

WEAK = [('dispatch_begin', '11:22:33', None), ('serve_begin', '11:22:33', None),
        ('serve_end', '11:22:33', -7), ('dispatch_end', '11:22:33', 9)]
HEADER = [('dispatch_begin', '44:55:66', None), ('dispatch_end', '44:55:66', 1)]
CTYPES = [('dispatch_begin', '77:88:99', None), ('serve_begin', '77:88:99', None),
          ('serve_end', '77:88:99', -2), ('dispatch_end', '77:88:99', 5)]
EXPECTED = {'weak': WEAK, 'mixed': WEAK + HEADER, 'ctypes': CTYPES}
FRAME_NAMES = ('zeprof_dispatch_begin', 'zeprof_dispatch_end', 'zeprof_serve_begin',
               'zeprof_serve_end')
MARK = re.compile(r'zeprof_frame:(\w+): .*?\{ session = (\d+), worker = (\d+), '
                  r'sequence = (\d+)(?:, status = (-?\d+))? \}')



def symbols(arguments, path):
    out = subprocess.run(['nm'] + arguments + [path], capture_output=True, text=True).stdout
    return {(line.split()[-1], line.split()[-2]) for line in out.splitlines()
            if len(line.split()) >= 2}


def main():
    record, shim, case, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    env = {k: v for k, v in os.environ.items() if k not in ('LD_PRELOAD', 'LD_LIBRARY_PATH')}
    if case == 'ctypes' and 'ASAN_OPTIONS' in env:
        env['ASAN_OPTIONS'] += ':detect_leaks=0'  # the Python interpreter's own allocations
    if case == 'mixed':
        program = command[0]
        dynamic = symbols(['-D', '--defined-only'], program)
        local = symbols([], program)
        check(not [s for s in dynamic if s[0] in FRAME_NAMES],
              f'the program exports the header\'s functions: {sorted(dynamic)}')
        check(('zeprof_dispatch_begin', 't') in local,
              'the header\'s inline functions were not emitted as local symbols (built at -O0?)')
    plain = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    check(plain.returncode == 0 and 'shim absent' in plain.stderr,
          f'untraced run: {plain.returncode} {plain.stderr.strip()}')
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, 'trace')
        traced = subprocess.run([record, trace, '--', 'env', f'LD_PRELOAD={shim}'] + command,
                                capture_output=True, text=True, env=env, timeout=120)
        if traced.returncode == 77:
            print(traced.stderr)
            return 77
        check(traced.returncode == plain.returncode and traced.stdout == plain.stdout,
              f'traced run differs: {traced.returncode} {traced.stdout!r} vs {plain.stdout!r}')
        check('shim present' in traced.stderr, f'the shim was not found: {traced.stderr.strip()}')
        text = subprocess.run(['babeltrace2', trace], capture_output=True, text=True).stdout
    marks = [(m[0], f'{m[1]}:{m[2]}:{m[3]}', int(m[4]) if m[4] else None)
             for m in MARK.findall(text)]
    check(marks == EXPECTED[case], f'frame marks: {marks}, expected {EXPECTED[case]}')
    return exit_status()


if __name__ == '__main__':
    sys.exit(main())
