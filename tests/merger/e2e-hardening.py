#!/usr/bin/env python3
"""e2e-hardening.py MERGE GEN_TRACE RECORD_TRACE: the merger on hostile input and output
(docs/merger.md, "Guarantees"). One section per guarantee:

  never-abort, never-hang: traces that make libbabeltrace2 2.0.4 abort or loop get exit 2 and
      the one line, both refused by the framing checks and (ZEPROF_MERGE_SKIP_VALIDATION=1)
      contained by the supervisor alone;
  nothing-half-written: no FILE.tmp.* after a failure, a crash, a stall, SIGTERM, SIGINT or
      SIGKILL of zeprof-merge, and no worker left running; a slow reader is not a stall; the
      same for a partial (--reduce) after a stall and SIGTERM, and for -J's temporary partials;
  output-target: -l through a symlink, into a FIFO and a device node, which stay what they are;
  names: a kernel name that is not UTF-8 keeps its row (-j) and the timeline stays valid JSON;
  reasons: a symlinked trace directory is read, an unreadable one says permission denied (as
      nobody), a newline in a path stays on the one line, no pointer addresses, -t says its
      output is incomplete;
  reader: no clock, a vpid that is not an integer.
Exit 77 (skip) when LTTng cannot record here."""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402

ONE_LINE = re.compile(r"^Failed to [a-z ]+: (path=[^\n]*, )?reason=[^\n]+$")
POINTER = re.compile(r"0x[0-9a-fA-F]{8,}")



def run(command, env=None, timeout=120):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(command, capture_output=True, timeout=timeout, env=full_env)


def stream_dir(trace):
    for root, _, files in os.walk(trace):
        if "metadata" in files:
            return root
    raise FileNotFoundError("metadata")


def mutate(good, work, name, change):
    path = os.path.join(work, name)
    shutil.copytree(good, path, symlinks=True)
    change(stream_dir(path))
    return path


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def edit_metadata(folder, old, new):
    """Replaces text in the metadata without changing its length (packet sizes stay valid)."""
    new = new.ljust(len(old))
    assert len(new) == len(old)
    path = os.path.join(folder, "metadata")
    with open(path, "rb") as f:
        data = f.read()
    assert old in data, old
    with open(path, "wb") as f:
        f.write(data.replace(old, new))


def metadata_packets(folder):
    with open(os.path.join(folder, "metadata"), "rb") as f:
        data = f.read()
    packets, offset = [], 0
    while offset < len(data):
        content = int.from_bytes(data[offset + 24:offset + 28], "little")
        size = int.from_bytes(data[offset + 28:offset + 32], "little")
        packets.append((offset, content, size))
        offset += size // 8
    return packets


def leftovers(target):
    folder, base = os.path.dirname(target), os.path.basename(target)
    return [f for f in os.listdir(folder) if f.startswith(base + ".tmp.")]


def expect_one_line(case, result, reason_part=None):
    """Exit 2 and exactly one well-formed line on stderr (without pointer addresses)."""
    text = result.stderr.decode("utf-8", "replace")
    lines = text.splitlines()
    check(result.returncode == 2, f"{case}: exit {result.returncode}, stderr {text[-300:]!r}")
    check(len(lines) == 1 and ONE_LINE.match(lines[0]), f"{case}: stderr {text[-300:]!r}")
    check(not POINTER.search(text), f"{case}: pointer address in {text!r}")
    if reason_part:
        check(reason_part in text, f"{case}: {reason_part!r} not in {text!r}")
    print(f"{case}: {lines[0] if lines else '(nothing)'}")


def failure_case(merge, work, case, trace, reason_part=None, env=None, extra=()):
    target = os.path.join(work, f"{case}.json")
    started = time.monotonic()
    result = run([merge, "-l", target, *extra, trace], env=env)
    expect_one_line(case, result, reason_part)
    check(time.monotonic() - started < 60, f"{case}: took {time.monotonic() - started:.0f} s")
    check(not os.path.exists(target), f"{case}: a timeline was written")
    check(not leftovers(target), f"{case}: left {leftovers(target)}")
    check(result.stdout == b"", f"{case}: stdout {result.stdout[:200]!r}")


def never_abort_never_hang(merge, good, work):
    u64 = lambda v: v.to_bytes(8, "little")
    big = lambda v: v.to_bytes(8, "big")
    stream = lambda folder: os.path.join(folder, "zeprof_0")
    index = lambda folder: os.path.join(folder, "index", "zeprof_0.idx")
    last_metadata = lambda folder: metadata_packets(folder)[-1]
    # Each of these aborted (SIGABRT) or hung libbabeltrace2 2.0.4, and so zeprof-merge.
    cases = {
        "content-size-2^63": lambda f: patch(stream(f), 48, u64(1 << 63)),
        "packet-size-2^63": lambda f: patch(stream(f), 56, u64(1 << 63)),
        "timestamp-end-max": lambda f: patch(stream(f), 40, u64(2**64 - 1)),
        "index-offset-past-file": lambda f: patch(index(f), 16, big(1 << 40)),
        "metadata-content-past-file": lambda f: patch(
            os.path.join(f, "metadata"), last_metadata(f)[0] + 24,
            (last_metadata(f)[2] + 8 * 4096).to_bytes(4, "little")),
    }
    stalling = None
    for case, change in cases.items():
        trace = mutate(good, work, case, change)
        if case == "metadata-content-past-file":
            stalling = trace  # libbabeltrace2 loops on it at 100% CPU
        # Refused by the framing checks, with a reason of their own...
        failure_case(merge, work, case, trace, "corrupt ")
        # ...and contained by the supervisor alone (crash or stall turned into the line).
        failure_case(merge, work, case + "-contained", trace, "corrupt trace: the CTF decoder",
                     env={"ZEPROF_MERGE_SKIP_VALIDATION": "1", "ZEPROF_MERGE_STALL_SECONDS": "3"})
    # Duplicate member names in the metadata: not checked before, only contained.
    duplicate = mutate(good, work, "duplicate-member",
                       lambda f: edit_metadata(f, b"_vtid;", b"_vpid;"))
    failure_case(merge, work, "duplicate-member", duplicate, "crashed (SIGABRT)")
    # A FIFO as the metadata: the checks must not block in open().
    fifo = mutate(good, work, "metadata-fifo", lambda f: (os.unlink(os.path.join(f, "metadata")),
                                                          os.mkfifo(os.path.join(f, "metadata"))))
    failure_case(merge, work, "metadata-fifo", fifo, "not a regular file")
    return stalling


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def nothing_half_written(merge, good, work, stalling):
    """Signals to zeprof-merge while it works on a trace that stalls the decoder: it ends by
    the signal (SIGTERM, SIGINT) or dies (SIGKILL), leaves no FILE.tmp.* and no worker."""
    # Two inputs: -J's workers reduce them into a temporary directory of their own, kept out of
    # the machine's /tmp (a SIGKILLed merger cannot remove it: docs/merger.md).
    temporary = os.path.join(work, "killed-tmpdir")
    os.makedirs(temporary, exist_ok=True)
    env = dict(os.environ, ZEPROF_MERGE_SKIP_VALIDATION="1", ZEPROF_MERGE_STALL_SECONDS="600",
               TMPDIR=temporary)
    for signal_number in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        case = f"killed-by-{signal.Signals(signal_number).name}"
        target = os.path.join(work, f"{case}.json")
        process = subprocess.Popen([merge, "-l", target, good, stalling], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        workers = []
        while not workers and time.monotonic() < deadline:
            time.sleep(0.1)
            workers = children_of(process.pid)
        time.sleep(1)  # the worker has read the good trace and sits in the stalled one
        process.send_signal(signal_number)
        status = process.wait(timeout=30)
        check(status == -signal_number, f"{case}: exit {status}")
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        check(workers and not any(alive(w) for w in workers), f"{case}: worker {workers} left")
        check(not leftovers(target), f"{case}: left {leftovers(target)}")
        check(not os.path.exists(target), f"{case}: a timeline was written")
        if signal_number != signal.SIGKILL:
            check(not os.listdir(temporary), f"{case}: left {os.listdir(temporary)} in TMPDIR")
        shutil.rmtree(temporary, ignore_errors=True)
        os.makedirs(temporary)
        print(f"{case}: exit {status}, no worker, no temporary file")


def partial_half_written(merge, good, work, stalling):
    """--reduce that stalls or is stopped leaves no PARTIAL and no PARTIAL.tmp.*; -J workers
    stopped by SIGTERM leave nothing in TMPDIR."""
    temporary = os.path.join(work, "tmpdir")
    os.makedirs(temporary, exist_ok=True)
    target = os.path.join(work, "host.partial")
    env = dict(os.environ, ZEPROF_MERGE_SKIP_VALIDATION="1", ZEPROF_MERGE_STALL_SECONDS="1",
               TMPDIR=temporary)
    result = run([merge, "--reduce", good, stalling, "-o", target], env=env)
    expect_one_line("reduce-stalled", result, "no progress")
    check(not os.path.exists(target) and not leftovers(target),
          f"reduce-stalled: left {leftovers(target)}")
    env["ZEPROF_MERGE_STALL_SECONDS"] = "600"
    for case, argv in (("reduce-killed-by-SIGTERM", ["--reduce", good, stalling, "-o", target]),
                       ("J2-killed-by-SIGTERM", ["-J", "2", good, stalling])):
        process = subprocess.Popen([merge, *argv], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
        time.sleep(1.5)  # the good trace is read, the stalling one holds its reader
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=30)
        process.stderr.close()
        check(status == -signal.SIGTERM, f"{case}: exit {status}")
        check(not os.path.exists(target) and not leftovers(target),
              f"{case}: left {leftovers(target)}")
        check(not os.listdir(temporary), f"{case}: left {os.listdir(temporary)} in TMPDIR")
        print(f"{case}: exit {status}, no partial, no temporary file")


def slow_reader(merge, good):
    """A worker blocked on a slow reader of its output is waiting, not stalled."""
    env = dict(os.environ, ZEPROF_MERGE_STALL_SECONDS="1")
    expected = run([merge, "-t", good]).stdout.count(b"\n") * 20
    process = subprocess.Popen([merge, "-t", *[good] * 20], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    time.sleep(4)  # the pipe fills up long before
    stdout, stderr = process.communicate(timeout=120)
    check(process.returncode == 0, f"slow reader: exit {process.returncode} {stderr!r}")
    lines = stdout.count(b"\n")
    check(lines == expected, f"slow reader: {lines} lines of {expected}")
    print(f"slow reader: {expected} lines after a 4 s pause, stall limit 1 s")


def output_targets(merge, good, work):
    # A symlink: the file it points to is written, the link stays.
    real = os.path.join(work, "real-timeline.json")
    link = os.path.join(work, "link.json")
    os.symlink("real-timeline.json", link)
    result = run([merge, "-l", link, good])
    check(result.returncode == 0, f"symlink: exit {result.returncode} {result.stderr!r}")
    check(os.path.islink(link), "symlink: the link was replaced")
    check(os.path.isfile(real) and json.load(open(real, encoding="utf-8"))["traceEvents"],
           "symlink: its target was not written")
    check(not leftovers(real) and not leftovers(link), "symlink: temporary file left")
    # A FIFO: written into (a reader is waiting), still a FIFO afterwards.
    fifo = os.path.join(work, "timeline.fifo")
    os.mkfifo(fifo)
    received = {}

    def read_fifo():
        with open(fifo, "rb") as f:
            received["data"] = f.read()

    reader = threading.Thread(target=read_fifo)
    reader.start()
    result = run([merge, "-l", fifo, good])
    reader.join(timeout=60)
    check(result.returncode == 0, f"fifo: exit {result.returncode} {result.stderr!r}")
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "fifo: replaced by a regular file")
    try:
        check(json.loads(received.get("data", b"")).get("traceEvents"), "fifo: no events")
    except ValueError:
        check(False, "fifo: not valid JSON")
    # A device node of our own (a null device; root only): written into, not replaced.
    if os.geteuid() == 0:
        device = os.path.join(work, "null-device")
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        result = run([merge, "-l", device, good])
        check(result.returncode == 0, f"device: exit {result.returncode} {result.stderr!r}")
        check(stat.S_ISCHR(os.lstat(device).st_mode), "device: replaced by a regular file")
        check(not leftovers(device), "device: temporary file left")
    print("output targets: symlink, FIFO and device node kept")


def names(merge, good, work):
    def flip(folder):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if name.startswith("zeprof_") and os.path.isfile(path):
                with open(path, "rb") as f:
                    data = f.read()
                with open(path, "wb") as f:
                    f.write(data.replace(b"gen_kernel_b", b"gen_kernel\xffb"))

    trace = mutate(good, work, "not-utf8", flip)
    result = run([merge, "-j", trace])
    check(result.returncode == 0, f"not-utf8 -j: exit {result.returncode} {result.stderr!r}")
    rows = [row["name"] for row in json.loads(result.stdout)["device"]]
    check("gen_kernel\ufffdb" in rows, f"not-utf8 -j: row lost: {rows}")
    target = os.path.join(work, "not-utf8.json")
    result = run([merge, "-l", target, trace])
    check(result.returncode == 0, f"not-utf8 -l: exit {result.returncode}")
    try:
        with open(target, encoding="utf-8") as f:
            slices = [e["name"] for e in json.load(f)["traceEvents"] if e.get("cat") == "device"]
        check("gen_kernel\ufffdb" in slices, "not-utf8 -l: slice renamed or lost")
    except (ValueError, OSError) as error:
        check(False, f"not-utf8 -l: invalid timeline ({error})")
    print(f"names: not UTF-8 kept as U+FFFD ({len(rows)} device rows)")


def reasons(merge, good, work):
    # A trace directory given through a symlink is read like the directory.
    link = os.path.join(work, "trace-link")
    os.symlink(good, link)
    result = run([merge, link])
    check(result.returncode == 0, f"symlinked trace: {result.returncode} {result.stderr!r}")
    # A newline in a path stays on the one line (escaped).
    odd = os.path.join(work, "odd\nname")
    shutil.copytree(good, odd)
    check(run([merge, odd]).returncode == 0, "newline path: the good trace fails")
    result = run([merge, odd + "\nmissing"])
    expect_one_line("newline-path", result, "odd\\nname\\nmissing")
    # Pointer addresses of babeltrace2's messages are stripped (an event class id unknown).
    unknown_id = mutate(good, work, "unknown-event-id",
                        lambda f: edit_metadata(f, b"\tid = 0;\n\tstream_id", b"\tid=777;\n\tstream_id"))
    result = run([merge, unknown_id])
    expect_one_line("unknown-event-id", result, "event-class-id=0")
    # -t then a failure: the line says the printed events are incomplete.
    result = run([merge, "-t", good, os.path.join(work, "no-such-trace")])
    text = result.stderr.decode()
    check(result.returncode == 2 and "incomplete" in text and len(text.splitlines()) == 1,
           f"-t failure: {result.returncode} {text!r}")
    check(result.stdout.endswith(b"\n") and result.stdout.count(b"\n") > 10,
           f"-t failure: printed {result.stdout[-100:]!r}")
    print(f"-t failure: {text.strip()}")
    # An unreadable directory says so (as nobody: root reads everything).
    if os.geteuid() == 0 and shutil.which("setpriv"):
        shared = tempfile.mkdtemp(prefix="zeprof-nobody-")
        os.chmod(shared, 0o755)
        merge_copy = os.path.join(shared, "zeprof-merge")
        shutil.copy(merge, merge_copy)
        locked = os.path.join(shared, "locked")
        shutil.copytree(good, locked)
        os.chmod(locked, 0o755)
        for root, dirs, files in os.walk(locked):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)
        os.chmod(os.path.join(locked, "ust"), 0o700)  # root's own: nobody cannot enter
        nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        result = run([*nobody, merge_copy, locked])
        expect_one_line("unreadable-directory", result, "locked/ust (Permission denied)")
        os.chmod(locked, 0o700)
        result = run([*nobody, merge_copy, locked])
        expect_one_line("unreadable-top-directory", result, "Permission denied")
        shutil.rmtree(shared, ignore_errors=True)


def reader_checks(merge, good, work):
    integer = b"integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;"
    float_vpid = mutate(good, work, "vpid-float", lambda f: edit_metadata(
        f, integer, b"floating_point { exp_dig = 8; mant_dig = 24; align = 8; } _vpid;"))
    failure_case(merge, work, "vpid-float", float_vpid, "vpid or vtid is not an integer")

    def no_clock(folder):
        with open(os.path.join(folder, "metadata"), "rb") as f:
            data = f.read()
        start = data.index(b"\nclock {")
        end = data.index(b"};", start) + 2
        blank = bytes(c if c == 10 else 32 for c in data[start:end])
        for old, new in ((data[start:end], blank), (b"map = clock.monotonic.value;", b""),
                         (b"timestamp;", b"timestxmp;"), (b"timestamp_begin;", b"timestxmp_begin;"),
                         (b"timestamp_end;", b"timestxmp_end;"),
                         (b'tracer_name = "lttng-ust"', b'tracer_name = "lttng-usx"')):
            edit_metadata(folder, old, new)
        shutil.rmtree(os.path.join(folder, "index"))

    # The packet context loses its clock too: the framing checks refuse that first, so the
    # reader's own check is reached without them.
    no_clock_trace = mutate(good, work, "no-clock", no_clock)
    failure_case(merge, work, "no-clock", no_clock_trace, "no clock",
                 env={"ZEPROF_MERGE_SKIP_VALIDATION": "1"})
    failure_case(merge, work, "no-clock-validated", no_clock_trace,
                 "declaration of uint27_clock_monotonic_t is missing or damaged")


def main():
    merge, gen_trace, record_trace = (os.path.abspath(a) for a in sys.argv[1:4])
    if not shutil.which("lttng-sessiond"):
        print("lttng-sessiond not found: skipping")
        return 77
    work = tempfile.mkdtemp(prefix="zeprof-hard-")
    try:
        good = os.path.join(work, "good")
        recorded = run([record_trace, good, "--", gen_trace, "golden"])
        if recorded.returncode != 0:
            print(recorded.stderr.decode())
            print("could not record the trace")
            return 1
        check(run([merge, good]).returncode == 0, "the good trace fails")
        stalling = never_abort_never_hang(merge, good, work)
        nothing_half_written(merge, good, work, stalling)
        partial_half_written(merge, good, work, stalling)
        slow_reader(merge, good)
        output_targets(merge, good, work)
        names(merge, good, work)
        reasons(merge, good, work)
        reader_checks(merge, good, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
