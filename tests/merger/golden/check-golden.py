#!/usr/bin/env python3
"""check-golden.py MERGE GOLDEN_DIR [--update]: zeprof-merge on checked-in traces, compared with
checked-in expectations, byte for byte. Needs no LTTng session daemon: only the traces.

Each case is a folder of GOLDEN_DIR holding `traces/` (one trace directory per host, given to
zeprof-merge in name order) and `expect/`, one file per output:

  tally.txt        zeprof-merge TRACES              tally-e.txt    zeprof-merge -e TRACES
  tally.json       zeprof-merge -j TRACES           tally-e.json   zeprof-merge -j -e TRACES
  timeline.json    zeprof-merge -l FILE TRACES      trace.txt      zeprof-merge -t TRACES

--update rewrites `expect/` from what zeprof-merge prints now: read every diff before committing
it (git diff tests/merger/golden). The cases: `gen` (gen-trace's scripted program: every anomaly,
a wrapping 32-bit device clock), `sample` (tests/l0/sample under the shim on the simulated
device, entry and exit per call), `sample-one-event` (the same, recorded with one-event calls),
`pair` (two simulated hosts of tests/multihost, the second placed through 20 frames).
"""

import difflib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness"))
from checks import check, exit_status  # noqa: E402

OUTPUTS = {
    "tally.txt": [],
    "tally-e.txt": ["-e"],
    "tally.json": ["-j"],
    "tally-e.json": ["-j", "-e"],
    "timeline.json": ["-l", None],
    "trace.txt": ["-t"],
}


def produce(merge, traces, options, scratch):
    """Runs zeprof-merge and returns what the output names (stdout, or the -l file) as bytes."""
    timeline = os.path.join(scratch, "timeline.json")
    argv = [merge] + [timeline if o is None else o for o in options] + traces
    result = subprocess.run(argv, capture_output=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {result.returncode}: "
                           f"{result.stderr.decode(errors='replace').strip()}")
    if None in options:
        with open(timeline, "rb") as f:
            return f.read()
    return result.stdout


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--update"):
        print(__doc__, file=sys.stderr)
        return 2
    merge, golden = sys.argv[1], sys.argv[2]
    update = len(sys.argv) == 4
    cases = sorted(c for c in os.listdir(golden) if os.path.isdir(os.path.join(golden, c, "traces")))
    if not cases:
        print(f"no case in {golden}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="zeprof-golden-") as scratch:
        for case in cases:
            traces_dir = os.path.join(golden, case, "traces")
            traces = [os.path.join(traces_dir, t) for t in sorted(os.listdir(traces_dir))]
            expect_dir = os.path.join(golden, case, "expect")
            for name, options in OUTPUTS.items():
                expect_path = os.path.join(expect_dir, name)
                try:
                    actual = produce(merge, traces, options, scratch)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    check(False, f"{case}/{name}: zeprof-merge runs", str(error))
                    continue
                if update:
                    os.makedirs(expect_dir, exist_ok=True)
                    with open(expect_path, "wb") as f:
                        f.write(actual)
                    print(f"updated {case}/{name}")
                    continue
                with open(expect_path, "rb") as f:
                    expected = f.read()
                if check(actual == expected, f"{case}/{name}: the output is {expect_path}"):
                    continue
                diff = difflib.unified_diff(
                    expected.decode(errors="replace").splitlines(),
                    actual.decode(errors="replace").splitlines(),
                    "expected", "actual", lineterm="", n=1)
                for line in list(diff)[:40]:
                    print("    " + line)
    return 0 if update else exit_status()


if __name__ == "__main__":
    sys.exit(main())
