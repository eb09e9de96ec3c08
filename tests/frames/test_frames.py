#!/usr/bin/env python3
"""zeprof.h end to end: frames_app runs without zeprof, and under the shim it records the four
frame marks with their key and statuses, in order. zeprof-merge refuses, with one line and exit 2
and no timeline left behind, a frame dispatched twice and frames whose windows form a cycle.

usage: test_frames.py RECORD SHIM FRAMES_APP ZEPROF_MERGE
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402

record, shim, app, merge = sys.argv[1:5]


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

    def recorded(name, *steps):
        path = os.path.join(work, name)
        run = subprocess.run([record, path, "--", "env", f"LD_PRELOAD={shim}", app] + list(steps),
                             capture_output=True, text=True, env=env)
        check(run.returncode == 0, f"recording {name} failed: {run.stderr}")
        return path

    def refused(paths, reason):
        timeline = os.path.join(work, "timeline.json")
        merged = subprocess.run([merge, "-l", timeline] + paths, capture_output=True, text=True)
        lines = merged.stderr.strip().splitlines()
        check(merged.returncode == 2 and len(lines) == 1 and reason in lines[0],
              f"expected a one-line refusal with {reason!r}: {merged.returncode} {merged.stderr}")
        check(not os.path.exists(timeline) and not [f for f in os.listdir(work) if ".tmp" in f],
              "a refused merge left a timeline behind")

    refused([recorded("twice", "twice:5")], "1:0:5 dispatched twice")
    # Host a calls b (frame 1) while b calls a (frame 2): the windows form a cycle.
    refused([recorded("a", "call:1", "serve:2"), recorded("b", "serve:1", "call:2")], "cycle")
sys.exit(exit_status())
print("ok")
