#!/usr/bin/env python3
"""e2e-bad-input.py MERGE GEN_TRACE RECORD_TRACE: every kind of bad input gives exit 2, exactly
one "Failed to ..." line on stderr, nothing on stdout and no timeline file (complete-looking or
temporary) left behind. Exit 77 (skip) when LTTng cannot record here."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402



def run(command):
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def find(trace, name):
    for root, _, files in os.walk(trace):
        if name in files:
            return os.path.join(root, name)
    raise FileNotFoundError(name)


def stream_files(trace):
    metadata = find(trace, "metadata")
    folder = os.path.dirname(metadata)
    return [os.path.join(folder, f) for f in sorted(os.listdir(folder))
            if f.startswith("zeprof_") and os.path.isfile(os.path.join(folder, f))]


def copy_trace(good, work, name):
    path = os.path.join(work, name)
    shutil.copytree(good, path)
    return path


def replace_in_metadata(trace, old, new):
    assert len(old) == len(new)  # keeps the metadata packets' sizes valid
    path = find(trace, "metadata")
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data.replace(old, new))


def expect_failure(merge, case, path, work, extra=(), output=None):
    output = output or os.path.join(work, f"{case}.json")
    result = run([merge, "-l", output, *extra, path])
    lines = result.stderr.splitlines()
    check(result.returncode == 2, f"{case}: exit {result.returncode}")
    check(len(lines) == 1 and lines[0].startswith("Failed to "),
           f"{case}: stderr {result.stderr!r}")
    check(result.stdout == "", f"{case}: stdout {result.stdout[:200]!r}")
    folder = os.path.dirname(output)
    if os.path.isdir(folder):
        leftovers = [f for f in os.listdir(folder) if f.startswith(os.path.basename(output))]
        check(not leftovers, f"{case}: left {leftovers}")
    print(f"{case}: {lines[0] if lines else '(nothing)'}")


def main():
    merge, gen_trace, record_trace = sys.argv[1:4]
    if not shutil.which("lttng-sessiond"):
        print("lttng-sessiond not found: skipping")
        return 77
    work = tempfile.mkdtemp(prefix="zeprof-bad-")
    try:
        good = os.path.join(work, "good")
        recorded = run([record_trace, good, "--", gen_trace, "golden"])
        if recorded.returncode != 0:
            # LTTng is there (checked above): a recording that fails is a failure, not a skip.
            print(recorded.stderr)
            print("could not record the trace")
            return 1
        sanity = run([merge, good])
        check(sanity.returncode == 0, f"the good trace fails: {sanity.stderr}")

        expect_failure(merge, "missing-path", os.path.join(work, "no-such-dir"), work)
        empty = os.path.join(work, "empty")
        os.mkdir(empty)
        with open(os.path.join(empty, "notes.txt"), "w", encoding="utf-8") as f:
            f.write("not a trace\n")
        expect_failure(merge, "no-trace", empty, work)
        expect_failure(merge, "a-file", os.path.join(empty, "notes.txt"), work)

        truncated = copy_trace(good, work, "truncated")
        biggest = max(stream_files(truncated), key=os.path.getsize)
        os.truncate(biggest, os.path.getsize(biggest) // 2 + 100)
        expect_failure(merge, "truncated-stream", truncated, work)

        garbage = copy_trace(good, work, "garbage")
        with open(stream_files(garbage)[0], "r+b") as f:
            f.write(b"\xde\xad\xbe\xef" * 64)
        expect_failure(merge, "corrupt-stream", garbage, work)

        unparsable = copy_trace(good, work, "unparsable")
        # LTTng's declarations kept (else the framing checks refuse it first): the parser's turn,
        # on the first line (a parse error further on leaks in libbabeltrace2,
        # tests/fuzz/README.md).
        replace_in_metadata(unparsable, b"/* CTF 1.8 */", b"/{ CTF 1.8 */")
        expect_failure(merge, "unparsable-metadata", unparsable, work)

        foreign = copy_trace(good, work, "foreign")
        replace_in_metadata(foreign, b"zeprof_", b"other__")
        expect_failure(merge, "other-tracer", foreign, work)
        result = run([merge, foreign])
        check("another tracer" in result.stderr, f"other-tracer reason: {result.stderr!r}")

        expect_failure(merge, "unwritable-output", good, work,
                       output=os.path.join(work, "no-such-dir", "timeline.json"))
        # A bad trace after a good one still leaves no timeline.
        expect_failure(merge, "second-path-bad", good, work,
                       extra=(os.path.join(work, "no-such-dir"),))
        result = run([merge, "--max-rate-ppm", "lots", good])
        check(result.returncode == 2 and len(result.stderr.splitlines()) == 1,
               f"bad option: {result.returncode} {result.stderr!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
