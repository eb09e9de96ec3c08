#!/usr/bin/env python3
"""Check that libzesim.so exports exactly the 46 dispatch-table getters the 1.8 loader needs, plus,
when built against newer headers, the getters of newer tables it fills (NEWER).

Any other exported symbol is a hazard: one named like an API call would bind to the preloaded
zeprof shim and recurse. Usage: check_exports.py LIBRARY
"""
import re
import subprocess
import sys

EXPECTED = {"ze": 17, "zet": 12, "zes": 17}
NEWER = {"zeGetCommandListExpProcAddrTable"}  # spec 1.9


def main():
    library = sys.argv[1]
    output = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                            capture_output=True, text=True).stdout
    names = [line.split()[-1] for line in output.splitlines() if line.strip()]
    getter = re.compile(r"^(ze|zet|zes)Get[A-Za-z]+ProcAddrTable$")
    strays = [name for name in names if not getter.match(name)]
    counts = {prefix: 0 for prefix in EXPECTED}
    for name in names:
        match = getter.match(name)
        if name in NEWER:
            continue
        if match:
            counts[match.group(1)] += 1
    if strays or counts != EXPECTED:
        print(f"Failed to match the expected exports: strays={strays}, counts={counts}, "
              f"expected={EXPECTED}")
        return 1
    print(f"PASS {len(names)} table getters exported, nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
