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

Partials (zeprof-merge --reduce) must give the same bytes: every output but `-t` is also made
from one partial per host and compared with the same expectations; with several hosts, `-e -j`
and the timeline also from one partial of all hosts and with -J 3 on the traces; and all the
golden hosts at once give the same bytes with -J 1 and -J 3. A partial reduced with --no-spans
gives the same tally, and a timeline of it (even reduced again) is refused. Reducing partials again, or a partial with a
trace, gives the very bytes of reducing the traces (associativity). A truncated, corrupt or
future-version partial is refused in one line (exit 2, no timeline written).
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


def reduce(merge, inputs, partial):
    """zeprof-merge --reduce INPUTS -o PARTIAL; returns the partial's bytes."""
    argv = [merge, "--reduce"] + inputs + ["-o", partial]
    result = subprocess.run(argv, capture_output=True, timeout=120)
    if result.returncode != 0 or result.stderr:
        raise RuntimeError(f"{' '.join(argv)} exited {result.returncode}: "
                           f"{result.stderr.decode(errors='replace').strip()}")
    with open(partial, "rb") as f:
        return f.read()


def compare(case, name, actual, expect_path, how=None):
    """Checks actual against the expected file; prints the start of the diff when they differ."""
    with open(expect_path, "rb") as f:
        expected = f.read()
    label = f"{case}/{name} {how}" if how else f"{case}/{name}"
    if check(actual == expected, f"{label}: the output is {expect_path}"):
        return
    diff = difflib.unified_diff(
        expected.decode(errors="replace").splitlines(),
        actual.decode(errors="replace").splitlines(),
        "expected", "actual", lineterm="", n=1)
    for line in list(diff)[:40]:
        print("    " + line)


def refused(merge, case, how, argv_tail, scratch, reason):
    """zeprof-merge -l FILE ARGV_TAIL must fail with one line naming `reason`, writing nothing."""
    timeline = os.path.join(scratch, "refused.json")
    result = subprocess.run([merge, "-l", timeline] + argv_tail, capture_output=True, timeout=60)
    lines = result.stderr.decode(errors="replace").splitlines()
    check(result.returncode == 2 and len(lines) == 1 and
          lines[0].startswith("Failed to read trace: path=") and reason in lines[0] and
          not os.path.exists(timeline) and not result.stdout,
          f"{case}: a {how} partial is refused in one line ({reason})",
          f"exit {result.returncode}, stderr {lines}")


def check_partials(merge, case, traces, expect_dir, scratch):
    """The outputs from partials equal the expectations of the traces. Returns a partial."""
    per_host = [os.path.join(scratch, f"{case}-{i}.partial") for i in range(len(traces))]
    whole = os.path.join(scratch, f"{case}-all.partial")
    ways = {"from one partial per host": (per_host, OUTPUTS)}
    try:
        host_bytes = [reduce(merge, [t], p) for t, p in zip(traces, per_host)]
        if len(traces) > 1:
            whole_bytes = reduce(merge, traces, whole)
            # associativity: the same partial, whatever was reduced first
            again = os.path.join(scratch, "again.partial")
            check(reduce(merge, per_host, again) == whole_bytes,
                  f"{case}: reducing the hosts' partials gives the bytes of reducing the traces")
            check(reduce(merge, [whole], again) == whole_bytes,
                  f"{case}: reducing a partial again gives the same bytes")
            check(reduce(merge, [per_host[0]] + traces[1:], again) == whole_bytes,
                  f"{case}: reducing a partial with traces gives the same bytes")
            some = {n: OUTPUTS[n] for n in ("tally-e.json", "timeline.json")}
            ways["from one partial"] = ([whole], some)
            ways["with -J 3"] = (["-J", "3"] + traces, some)
            # the Perfetto timeline too (chosen by the file name)
            perfetto = []
            for inputs in (traces, [whole]):
                target = os.path.join(scratch, "timeline.pftrace")
                made = subprocess.run([merge, "-l", target] + inputs, capture_output=True,
                                      timeout=120)
                with open(target, "rb") as f:
                    perfetto.append((made.returncode, f.read()))
            check(perfetto[0] == perfetto[1] and perfetto[0][0] == 0 and perfetto[0][1],
                  f"{case}: the Perfetto timeline from a partial is the traces' byte for byte")
            # --no-spans: the same tally from a smaller partial, and no timeline of it
            light = os.path.join(scratch, f"{case}-light.partial")
            check(len(reduce(merge, ["--no-spans"] + traces, light)) < len(whole_bytes),
                  f"{case}: a partial without spans is smaller")
            ways["from one partial without spans"] = (
                [light], {n: OUTPUTS[n] for n in ("tally.txt", "tally-e.json")})
            refused(merge, case, "span-less", [light], scratch, "holds no spans")
            check(reduce(merge, [light], again) == open(light, "rb").read(),
                  f"{case}: a span-less partial reduced again is the same bytes")
            refused(merge, case, "span-less reduced again", [again], scratch, "holds no spans")
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        check(False, f"{case}: zeprof-merge --reduce runs", str(error))
        return None
    for how, (inputs, outputs) in ways.items():
        for name, options in outputs.items():
            if name == "trace.txt":
                continue
            try:
                actual = produce(merge, inputs, options, scratch)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                check(False, f"{case}/{name} {how}: zeprof-merge runs", str(error))
                continue
            compare(case, name, actual, os.path.join(expect_dir, name), how)

    if len(traces) > 1:
        # a failing input among several: the same one line whatever -J, no partial left behind
        empty = os.path.join(scratch, "no-trace-here")
        os.makedirs(empty, exist_ok=True)
        temporary = os.path.join(scratch, "tmp")
        os.makedirs(temporary, exist_ok=True)
        lines = []
        for jobs in ("1", "3"):
            result = subprocess.run([merge, "-J", jobs, traces[0], empty] + traces[1:],
                                    capture_output=True, timeout=60,
                                    env=dict(os.environ, TMPDIR=temporary))
            lines.append((result.returncode, result.stderr.decode(errors="replace")))
        check(lines[0] == lines[1] and lines[0][0] == 2 and lines[0][1].count("\n") == 1 and
              f"path={empty}, reason=no CTF trace" in lines[0][1] and not os.listdir(temporary),
              f"{case}: a bad input among several: one line, the same with -J 1 and -J 3, "
              "nothing left in TMPDIR",
              f"{lines} left: {[os.path.join(d, n) for d, ds, fs in os.walk(temporary) for n in ds + fs]}")
        # a host given twice: its frames are dispatched twice, a refusal of the merge itself,
        # which names the input (not the partial a -J worker made of it), whatever -J
        lines = []
        for jobs in ("1", "3"):
            result = subprocess.run([merge, "-J", jobs, traces[0], traces[0]],
                                    capture_output=True, timeout=60,
                                    env=dict(os.environ, TMPDIR=temporary))
            lines.append((result.returncode, result.stderr.decode(errors="replace")))
        check(lines[0] == lines[1] and lines[0][0] == 2 and
              f"path={traces[0]}, reason=frame " in lines[0][1] and not os.listdir(temporary),
              f"{case}: a host given twice: the same line with -J 1 and -J 3, naming the input",
              str(lines))
    return host_bytes[-1]


def check_bad_partials(merge, data, scratch):
    """Partials that are not whole are refused in one line, nothing written."""
    bad = os.path.join(scratch, "bad.partial")
    for how, content, reason in [
            ("truncated", data[:len(data) - 3], "truncated partial"),
            ("corrupt", data[:-5] + bytes([data[-5] ^ 0x10]) + data[-4:], "corrupt partial"),
            ("future-version", data[:8] + bytes([2]) + data[9:], "format version 2"),
            ("empty", b"", "empty file"),
            ("foreign", b"not a partial at all, just text\n" * 4, "nor a zeprof partial")]:
        with open(bad, "wb") as f:
            f.write(content)
        refused(merge, "partial", how, [bad], scratch, reason)
    # spans are checked where they are used: a flip inside them fails the timeline
    refused(merge, "partial", "corrupt-spans", [bad_spans(data, bad)], scratch,
            "corrupt partial")
    # a FIFO given as a partial is refused, not waited on
    fifo = os.path.join(scratch, "fifo.partial")
    os.mkfifo(fifo)
    refused(merge, "partial", "FIFO", [fifo], scratch, "nor a zeprof partial")


def bad_spans(data, path):
    """A copy of `data` with a byte of the first host's spans section flipped, at `path`."""
    spans_size = int.from_bytes(data[32:40], "little")
    flipped = bytearray(data)
    flipped[48 + spans_size // 2] ^= 0x01
    with open(path, "wb") as f:
        f.write(flipped)
    return path


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
        partial = None
        for case in cases:
            traces_dir = os.path.join(golden, case, "traces")
            traces = [os.path.join(traces_dir, t) for t in sorted(os.listdir(traces_dir))]
            expect_dir = os.path.join(golden, case, "expect")
            if not update:
                partial = check_partials(merge, case, traces, expect_dir, scratch) or partial
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
                compare(case, name, actual, expect_path)
        if not update:
            check_jobs(merge, golden, cases, scratch)
            if partial:
                check_bad_partials(merge, partial, scratch)
    return 0 if update else exit_status()


def check_jobs(merge, golden, cases, scratch):
    """Every golden host at once (more inputs than workers, one given twice): -e -j, the timeline
    and the partial of --reduce are the same bytes with -J 1 and 3."""
    traces = []
    for case in cases:
        traces_dir = os.path.join(golden, case, "traces")
        traces += [os.path.join(traces_dir, t) for t in sorted(os.listdir(traces_dir))]
    traces.append(traces[0])  # gen again (no frames: a pair twice would dispatch twice)
    for name in ("tally-e.json", "timeline.json"):
        outputs = {}
        for jobs in ("1", "3"):
            try:
                outputs[jobs] = produce(merge, ["-J", jobs] + traces, OUTPUTS[name], scratch)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                outputs[jobs] = str(error).encode()
        check(outputs["1"] == outputs["3"] and len(outputs["1"]) > 100,
              f"all {len(traces)} golden hosts at once: {name} is the same with -J 1 and 3")
    partials = []
    for jobs in ("1", "3"):
        try:
            partials.append(reduce(merge, ["-J", jobs] + traces,
                                   os.path.join(scratch, f"J{jobs}.partial")))
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            partials.append(str(error).encode())
    check(partials[0] == partials[1] and partials[0].startswith(b"ZEPROFPT"),
          f"all {len(traces)} golden hosts at once: --reduce -J 1 and -J 3 write the same bytes")


if __name__ == "__main__":
    sys.exit(main())
