#!/usr/bin/env python3
"""Sum meson's test results (meson-logs/testlog.json) of several build dirs into one line:
'N passed, N failed' (', N skipped' when any were skipped). A missing log counts as one failure,
since it means that build did not get as far as testing."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        failed += 1
        continue
    for result in lines:
        verdict = result.get("result")
        if verdict in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif verdict == "SKIP":
            skipped += 1
        else:
            failed += 1

line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
