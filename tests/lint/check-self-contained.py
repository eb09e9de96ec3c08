#!/usr/bin/env python3
"""check-self-contained.py SOURCE_ROOT: the repository stands alone.

Every file git tracks must point only at documents that the repository holds: a name such as
DESIGN.md, INTERFACE.md or STYLE.md (the team's notebook outside the repository) or a path that
leaves the repository (../shared, /work/notes) is reported with its file and line, and the test
fails. docs/ carries the contract, the design and the conventions instead.
"""

import pathlib
import re
import subprocess
import sys

FOREIGN = re.compile(r'\b(DESIGN|INTERFACE|STYLE)\.md\b|\.\./shared\b|/work/notes\b|notes/hooks\.md')


def main():
    root = pathlib.Path(sys.argv[1])
    names = subprocess.run(['git', '-C', str(root), 'ls-files', '-z'], check=True,
                           capture_output=True).stdout.split(b'\0')
    found = 0
    for name in filter(None, names):
        path = root / name.decode()
        if path.resolve() == pathlib.Path(__file__).resolve() or not path.is_file():
            continue
        try:
            text = path.read_text(errors='replace')
        except OSError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if FOREIGN.search(line):
                print(f'{name.decode()}:{number}: points outside the repository: {line.strip()}')
                found += 1
    if found:
        print(f'{found} reference(s) to documents the repository does not hold')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
