#!/usr/bin/env python3
"""zeprof.h end to end: frames_app runs without zeprof, and under the shim it records the four
frame marks with their key and statuses, in order.

usage: test_frames.py RECORD SHIM FRAMES_APP
"""
import os
import re
import subprocess
import sys
import tempfile

record, shim, app = sys.argv[1:4]
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)


env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
plain = subprocess.run([app], capture_output=True, text=True, env=env)
check(plain.returncode == 0 and "frames_app: ok" in plain.stdout,
      f"untraced run failed: {plain.returncode} {plain.stderr}")

with tempfile.TemporaryDirectory() as work:
    trace = os.path.join(work, "trace")
    traced = subprocess.run([record, trace, "--", "env", f"LD_PRELOAD={shim}", app],
                            capture_output=True, text=True, env=env)
    check(traced.returncode == 0, f"traced run failed: {traced.returncode} {traced.stderr}")
    text = subprocess.run(["babeltrace2", trace], capture_output=True, text=True).stdout
    marks = re.findall(r"zeprof_frame:(\w+): .*?\{ (session = \d+, worker = \d+, sequence = \d+"
                       r"(?:, status = -?\d+)?) \}", text)
    key = "session = 1234567890123, worker = 7, sequence = 42"
    check(marks == [("dispatch_begin", key), ("serve_begin", key),
                    ("serve_end", key + ", status = -5"), ("dispatch_end", key + ", status = 3")],
          f"frame marks: {marks}")
if failures:
    sys.exit(1)
print("ok")
