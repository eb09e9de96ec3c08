#!/usr/bin/env python3
"""check-stream-merge.py MERGE GOLDEN_DIR

zeprof-merge's own merge of a trace's streams (merger/stream_merge.c) against babeltrace2's
flt.utils.muxer (ZEPROF_MERGE_MUXER=1), on traces where every event has a twin with the same
timestamp: each golden trace next to a copy of itself whose trace UUID is changed (to one below
and one above the original, so either copy wins the ties) and whose process name is changed (so
that `-t` tells the twins apart). The `-t` dump, `-e -j` and the timeline must be identical both
ways, the twins must interleave, and the merge must be ours (`-v` says so). Two plain copies (the
same UUID: a tie the merge leaves to the muxer) must go through the muxer, with the same output.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print(f"FAIL: {message}")


def run(merge, args, muxer=False):
    env = dict(os.environ)
    env.pop("ZEPROF_MERGE_MUXER", None)
    if muxer:
        env["ZEPROF_MERGE_MUXER"] = "1"
    return subprocess.run([merge, *args], env=env, capture_output=True, timeout=120)


def twin(source, work, new_uuid, procname):
    """`source` as work/a and, as work/b, a copy with trace UUID `new_uuid` and the process name
    `procname` made different (same lengths: the CTF framing stays valid)."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, os.path.join(work, "a"))
    copy = os.path.join(work, "b")
    shutil.copytree(source, copy)
    if new_uuid is None:
        return
    metadata = glob.glob(os.path.join(copy, "**", "metadata"), recursive=True)[0]
    with open(metadata, "rb") as f:
        text = f.read()
    start = text.index(b'uuid = "') + 8  # the trace's UUID comes before the clock's
    old_text = text[start:start + 36]
    old_bytes, new_bytes = uuid.UUID(old_text.decode()).bytes, uuid.UUID(new_uuid).bytes
    new_name = procname[:-1] + ("X" if procname[-1] != "X" else "Y")
    for path in glob.glob(os.path.join(copy, "**", "*"), recursive=True):
        if not os.path.isfile(path) or path.endswith(".idx"):
            continue
        with open(path, "rb") as f:
            data = f.read()
        data = data.replace(old_bytes, new_bytes).replace(old_text, new_uuid.encode())
        if os.path.basename(path) != "metadata":
            data = data.replace(procname.encode() + b"\0", new_name.encode() + b"\0")
        with open(path, "wb") as f:
            f.write(data)


def procname_of(merge, trace):
    first = run(merge, ["-t", trace]).stdout.decode().splitlines()[0]
    return first.split('procname = "', 1)[1].split('"', 1)[0]


def same_both_ways(merge, trace, work, case, expect_ours):
    verbose = run(merge, ["-v", "-t", trace]).stderr.decode()
    ours = "through the muxer" not in verbose
    check(ours == expect_ours, f"{case}: merged {'by us' if ours else 'by the muxer'}: {verbose!r}")
    timeline = os.path.join(work, "timeline.json")
    for args in (["-t"], ["-e", "-j"], ["-l", timeline]):
        outputs = []
        for muxer in (False, True):
            result = run(merge, [*args, trace], muxer=muxer)
            check(result.returncode == 0, f"{case} {args}: exit {result.returncode}: "
                  f"{result.stderr[:300]!r}")
            if args[0] == "-l":
                with open(timeline, "rb") as f:
                    outputs.append(f.read())
            else:
                outputs.append(result.stdout)
        check(outputs[0] == outputs[1], f"{case} {args}: differs from the muxer's")
    return run(merge, ["-t", trace]).stdout.decode().splitlines()


def main():
    merge, golden = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="zeprof-stream-merge-")
    try:
        for name in ("gen", "sample"):
            traces = os.path.join(golden, name, "traces")
            procname = procname_of(merge, traces)
            for new_uuid in ("00000000-0000-4000-8000-000000000000",
                             "ffffffff-ffff-4fff-8fff-ffffffffffff"):
                case = f"{name} twin {new_uuid[:2]}"
                folder = os.path.join(work, "t")
                twin(traces, folder, new_uuid, procname)
                lines = same_both_ways(merge, folder, work, case, expect_ours=True)
                # Twins: the same time on consecutive lines, from the two copies.
                pairs = sum(1 for one, two in zip(lines, lines[1:])
                            if one.split(" ", 1)[0] == two.split(" ", 1)[0]
                            and (f'"{procname}"' in one) != (f'"{procname}"' in two))
                check(pairs * 2 >= len(lines) - 2, f"{case}: {pairs} twin pairs in {len(lines)}")
                print(f"{case}: {len(lines)} lines, {pairs} tied twins")
            folder = os.path.join(work, "t")
            twin(traces, folder, None, procname)
            same_both_ways(merge, folder, work, f"{name} plain copies", expect_ours=False)
            print(f"{name} plain copies: through the muxer, same output")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        sys.exit(1)


if __name__ == "__main__":
    main()
