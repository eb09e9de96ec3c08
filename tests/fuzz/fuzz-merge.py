#!/usr/bin/env python3
"""fuzz-merge.py: zeprof-merge on mutated CTF traces must never hang, never abort, never leave a
temporary file, and never trip a sanitizer (docs/merger.md, "Guarantees").

  fuzz-merge.py [--cases N] [--seed S] [--jobs J] [--keep DIR] [--trace DIR]...
                MERGE GEN_TRACE RECORD_TRACE

Seed traces: recorded here from gen-trace when LTTng is there (golden, and golden with tiny
buffers: many packets, discarded events), plus any --trace DIR (CI adds the checked-in golden
traces of tests/merger/golden, so the campaign runs without LTTng too). Case i of seed S is reproducible on its own: its
mutations come from random.Random(f"{S}:{i}"). Each case copies a seed trace, applies one to three
mutations (bit flips, truncation, packet and metadata size fields, timestamps, metadata text
edits, index edits, files removed or emptied) and runs zeprof-merge with one of -j, -e, -t, -l
(sometimes with the trace given twice). Verdicts:
  - the exit status is 0 or 2 (a signal death is an abort; no answer in 60 s is a hang);
  - on 2, stderr is exactly one "Failed to …: path=…, reason=…" line; on 0, stderr is empty;
  - on 0, -j output and the -l file are valid JSON;
  - no FILE.tmp.* is left beside the -l target, and no sanitizer log was written
    (ASAN_OPTIONS/UBSAN_OPTIONS log_path point into the work directory; lsan-babeltrace.supp
    names the two leaks of libbabeltrace2 itself, on its error paths, that are not reported).
A failing case is kept under --keep (default: the work directory, then not removed) with the
command that reproduces it. Exit 77 (skip) when LTTng cannot record here."""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ONE_LINE = re.compile(r"^Failed to [a-z ]+: (path=[^\n]*, )?reason=[^\n]+$")
HANG_SECONDS = 60
# Leaks of libbabeltrace2 itself on error paths (not of zeprof-merge); see the file.
SUPPRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsan-babeltrace.supp")
INTERESTING_64 = [0, 1, 8, 0x7FFFFFFF, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 8,
                  (1 << 64) - 1]
INTERESTING_32 = [0, 1, 8, 37 * 8, 0x7FFFFFFF, 0x80000000, 0xFFFFFFF8, 0xFFFFFFFF]


def files_of(folder):
    """Every file of a trace copy, relative: metadata, streams, indexes."""
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            found.append(os.path.relpath(os.path.join(root, name), folder))
    return sorted(found)


def stream_folder(trace):
    for root, _, names in os.walk(trace):
        if "metadata" in names:
            return root
    return None


def read(path):
    with open(path, "rb") as f:
        return bytearray(f.read())


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def packet_offsets(data, magic, header_size, size_field):
    """Offsets of the packets of a CTF file: each starts with MAGIC and holds its size in bits in
    the little-endian field at SIZE_FIELD (a slice of the header, which is HEADER_SIZE bytes)."""
    packets, offset = [], 0
    while offset + header_size <= len(data) and data[offset:offset + 4] == magic:
        size = int.from_bytes(data[offset + size_field.start:offset + size_field.stop],
                              "little") // 8
        packets.append(offset)
        if size < header_size:
            break
        offset += size
    return packets


def metadata_packets(data):
    return packet_offsets(data, b"\x57\x1d\xd1\x75", 37, slice(28, 32))


def stream_packets(data):
    return packet_offsets(data, b"\xc1\x1f\xfc\xc1", 64, slice(56, 64))


# ---- Mutations: each takes (random, trace folder holding metadata) and says what it did. ----

def pick_file(rng, folder, kind=None):
    names = [n for n in files_of(folder)
             if kind is None or (kind == "stream" and os.path.basename(n).startswith("zeprof_")
                                 and not n.endswith(".idx"))
             or (kind == "index" and n.endswith(".idx")) or (kind == "metadata" and n == "metadata")]
    return os.path.join(folder, rng.choice(names)) if names else None


def bit_flips(rng, folder):
    path = pick_file(rng, folder)
    data = read(path)
    if not data:
        return "bit flips: empty file"
    count = rng.choice([1, 1, 2, 4, 8])
    for _ in range(count):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    write(path, data)
    return f"{count} bit flips in {os.path.relpath(path, folder)}"


def truncation(rng, folder):
    path = pick_file(rng, folder)
    size = os.path.getsize(path)
    new = rng.choice([0, rng.randrange(size + 1), max(size - rng.randrange(1, 64), 0)])
    os.truncate(path, new)
    return f"truncated {os.path.relpath(path, folder)} to {new} of {size}"


def stream_field(rng, folder):
    path = pick_file(rng, folder, "stream")
    data = read(path)
    packets = stream_packets(data)
    if not packets:
        return bit_flips(rng, folder)
    packet = rng.choice(packets)
    name, offset = rng.choice([("timestamp_begin", 32), ("timestamp_end", 40),
                               ("content_size", 48), ("packet_size", 56),
                               ("packet_seq_num", 64), ("events_discarded", 72)])
    value = rng.choice(INTERESTING_64 + [len(data) * 8 + 8, rng.getrandbits(64),
                                         int.from_bytes(data[packet + offset:packet + offset + 8],
                                                        "little") + rng.choice([-8, 8, 1])])
    value %= 1 << 64
    data[packet + offset:packet + offset + 8] = value.to_bytes(8, "little")
    write(path, data)
    return f"{os.path.relpath(path, folder)} packet at {packet}: {name} = {value}"


def metadata_field(rng, folder):
    path = os.path.join(folder, "metadata")
    data = read(path)
    packets = metadata_packets(data)
    if not packets:
        return bit_flips(rng, folder)
    packet = rng.choice(packets)
    name, offset = rng.choice([("content_size", 24), ("packet_size", 28), ("magic", 0),
                               ("compression", 32)])
    if name == "compression":
        data[packet + 32] = rng.randrange(1, 256)
        write(path, data)
        return f"metadata packet at {packet}: compression scheme set"
    value = rng.choice(INTERESTING_32 + [len(data) * 8, rng.getrandbits(32),
                                         (len(data) - packet) * 8 + 8 * rng.randrange(1, 9000)])
    value %= 1 << 32
    data[packet + offset:packet + offset + 4] = value.to_bytes(4, "little")
    write(path, data)
    return f"metadata packet at {packet}: {name} = {value}"


TOKEN = re.compile(rb"[A-Za-z_][A-Za-z_0-9]*|[0-9]+")


def metadata_text(rng, folder):
    """Edits the metadata text in place, keeping its length (so the packets stay framed) or not."""
    path = os.path.join(folder, "metadata")
    data = read(path)
    tokens = list(TOKEN.finditer(bytes(data)))
    if not tokens:
        return bit_flips(rng, folder)
    token = rng.choice(tokens)
    start, end = token.span()
    old = bytes(data[start:end])
    edit = rng.choice(["same-length-name", "number", "duplicate", "blank", "byte-order", "grow"])
    if edit == "number" and old.isdigit():
        new = str(rng.choice([0, 1, 7, 9, 63, 64, 65, 128, 4294967295, 10 ** len(old) - 1]))
        new = new.encode()[:len(old)].rjust(len(old), b"0")
    elif edit == "duplicate":
        # Another identifier of the same length: duplicate member names, wrong type names...
        same = [t.group() for t in tokens if len(t.group()) == len(old) and t.group() != old]
        new = rng.choice(same) if same else old
    elif edit == "blank":
        new = b" " * len(old)
    elif edit == "byte-order" and old in (b"le", b"be"):
        new = b"be" if old == b"le" else b"le"
    elif edit == "grow":
        data[start:end] = old + old[:rng.randrange(1, 8)]
        write(path, data)
        return f"metadata: {old!r} grown (packet sizes now wrong)"
    else:
        new = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz_0123456789{};") for _ in old)
    data[start:end] = new
    write(path, data)
    return f"metadata: {old!r} -> {new!r}"


def index_field(rng, folder):
    path = pick_file(rng, folder, "index")
    if not path:
        return stream_field(rng, folder)
    data = read(path)
    if len(data) < 16 + 56:
        return truncation(rng, folder)
    entry_size = int.from_bytes(data[12:16], "big") or 72
    entries = max((len(data) - 16) // entry_size, 1)
    if rng.random() < 0.15:
        field, offset = "header", rng.choice([0, 4, 8, 12])
        value = rng.choice(INTERESTING_32) % (1 << 32)
        data[offset:offset + 4] = value.to_bytes(4, "big")
    else:
        entry = 16 + rng.randrange(entries) * entry_size
        field, at = rng.choice([("offset", 0), ("packet_size", 8), ("content_size", 16),
                                ("timestamp_begin", 24), ("timestamp_end", 32),
                                ("events_discarded", 40), ("stream_id", 48)])
        value = rng.choice(INTERESTING_64 + [os.path.getsize(path) * 8, rng.getrandbits(64)])
        offset = entry + at
        data[offset:offset + 8] = (value % (1 << 64)).to_bytes(8, "big")
    write(path, data)
    return f"{os.path.relpath(path, folder)}: {field} = {value}"


def files(rng, folder):
    path = pick_file(rng, folder)
    action = rng.choice(["remove", "empty", "duplicate"])
    relative = os.path.relpath(path, folder)
    if action == "remove":
        os.unlink(path)
    elif action == "empty":
        os.truncate(path, 0)
    else:
        shutil.copy(path, path + "_copy")
    return f"{action} {relative}"


MUTATIONS = [(bit_flips, 3), (truncation, 1), (stream_field, 3), (metadata_field, 2),
             (metadata_text, 3), (index_field, 2), (files, 1)]


def packet_context_without_content_size(rng, folder):
    """The metadata's packet context loses content_size (renamed, same length): babeltrace2 then
    decodes a packet's padding as events and runs out of data in the middle of one, a case
    where babeltrace2 2.0.4 kept the half-decoded event for ever (found by the campaign: seed
    20, case 6388, a bit flip; merger/reader.c, release_unfinished_events)."""
    path = os.path.join(folder, "metadata")
    data = read(path)
    at = data.find(b"content_size;")
    if at < 0:
        return "metadata: no content_size to rename"
    data[at:at + len(b"content_size")] = b"contdnt_size"
    write(path, data)
    return "metadata: content_size -> contdnt_size"


# Shapes that once failed, applied alone to every seed trace before the random cases (so that the
# bounded run in CI keeps them): name, mutation, mode.
REGRESSIONS = [("no-content-size", packet_context_without_content_size, "-e")]


def mutate(rng, folder):
    chosen = rng.choices([m for m, _ in MUTATIONS], weights=[w for _, w in MUTATIONS],
                         k=rng.choice([1, 1, 1, 2, 3]))
    done = []
    for mutation in chosen:
        try:
            done.append(mutation(rng, folder))
        except (OSError, IndexError, TypeError):
            # An earlier mutation removed or emptied what this one edits.
            done.append(f"{mutation.__name__}: nothing left to mutate")
    return done


# ---- Running one case ----------------------------------------------------------------------

def run_case(merge, seeds, seed, index, work, regression=None):
    """Case `index` of `seed`, or with `regression` = (name, mutation, mode, seed trace), that
    one fixed shape."""
    rng = random.Random(f"{seed}:{index}")
    seed_trace = regression[3] if regression else rng.choice(seeds)
    case_dir = os.path.join(work, f"case-{index}" if not regression else
                            f"regression-{regression[0]}-{index}")
    trace = os.path.join(case_dir, "trace")
    shutil.copytree(seed_trace, trace)
    folder = stream_folder(trace)
    if regression:
        what = [regression[1](rng, folder)] if folder else ["(no metadata)"]
        mode = regression[2]
    else:
        what = mutate(rng, folder) if folder else ["(no metadata)"]
        mode = rng.choice(["tally", "-j", "-e", "-t", "-l", "-l"])
    target = os.path.join(case_dir, "out", "timeline.json")
    os.makedirs(os.path.dirname(target))
    command = [merge]
    if mode == "-l":
        command += ["-l", target]
    elif mode != "tally":
        command.append(mode)
    command += [trace] * (1 if regression else rng.choice([1, 1, 1, 2]))
    sanitizer_logs = os.path.join(case_dir, "sanitizer")
    # handle_sigfpe=0: an integer division by zero in libbabeltrace2 (not instrumented) kills the
    # decoder by SIGFPE as in a normal build, for the supervisor to contain; UBSan still reports
    # any of ours.
    env = dict(os.environ,
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "detect_leaks=1") +
               f":fast_unwind_on_malloc=0:handle_sigfpe=0:log_path={sanitizer_logs}",
               LSAN_OPTIONS=os.environ.get("LSAN_OPTIONS", "") +
               f":print_suppressions=0:suppressions={SUPPRESSIONS}",

               UBSAN_OPTIONS=os.environ.get("UBSAN_OPTIONS", "print_stacktrace=1") +
               f":log_path={sanitizer_logs}")
    started = time.monotonic()
    problems = []
    try:
        result = subprocess.run(command, capture_output=True, timeout=HANG_SECONDS, env=env)
        status, stdout, stderr = result.returncode, result.stdout, result.stderr
    except subprocess.TimeoutExpired:
        status, stdout, stderr = None, b"", b""
        problems.append(f"hang: no answer in {HANG_SECONDS} s")
    seconds = time.monotonic() - started
    text = stderr.decode("utf-8", "replace")
    lines = text.splitlines()
    if status is not None and status not in (0, 2):
        problems.append(f"exit {status}" + (" (killed by a signal: abort)" if status < 0 else ""))
    if status == 2 and not (len(lines) == 1 and ONE_LINE.match(lines[0])):
        problems.append(f"not one line: {text[-500:]!r}")
    if status == 0 and text:
        problems.append(f"stderr on success: {text[-500:]!r}")
    if status == 0 and mode == "-j":
        try:
            json.loads(stdout)
        except ValueError as error:
            problems.append(f"-j output is not JSON: {error}")
    if status == 0 and mode == "-l":
        try:
            with open(target, encoding="utf-8") as f:
                json.load(f)
        except (OSError, ValueError) as error:
            problems.append(f"-l output is not JSON: {error}")
    if status == 2 and os.path.exists(target):
        problems.append("a timeline was written by a failed run")
    temporary = [f for f in os.listdir(os.path.dirname(target)) if ".tmp." in f]
    if temporary:
        problems.append(f"temporary files left: {temporary}")
    logs = [f for f in os.listdir(case_dir) if f.startswith("sanitizer")]
    if logs:
        with open(os.path.join(case_dir, logs[0]), encoding="utf-8", errors="replace") as f:
            problems.append("sanitizer report: " + f.read()[:2000])
    reason = lines[0].split("reason=", 1)[-1] if status == 2 and lines else ""
    outcome = {"index": index, "status": status, "seconds": seconds, "reason": reason,
               "what": what, "command": command, "problems": problems, "dir": case_dir,
               "regression": regression[0] if regression else None}
    if not problems:
        shutil.rmtree(case_dir, ignore_errors=True)
    return outcome


def record_seeds(record_trace, gen_trace, work):
    seeds = []
    for name, options in (("golden", []), ("tiny-buffers", ["--tiny-buffers"])):
        path = os.path.join(work, f"seed-{name}")
        result = subprocess.run([record_trace, *options, path, "--", gen_trace, "golden"],
                                capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            print(result.stderr)
            raise RuntimeError(f"could not record the {name} seed trace")
        seeds.append(path)
    return seeds


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="index of the first case")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", help="where failing cases are kept")
    parser.add_argument("--progress", type=int, default=0, help="report every N cases")
    parser.add_argument("--trace", action="append", default=[], help="another seed trace")
    parser.add_argument("merge")
    parser.add_argument("gen_trace")
    parser.add_argument("record_trace")
    args = parser.parse_args()
    merge = os.path.abspath(args.merge)
    if not shutil.which("lttng-sessiond") and not args.trace:
        print("lttng-sessiond not found: skipping")
        return 77
    work = tempfile.mkdtemp(prefix="zeprof-fuzz-")
    keep = args.keep or work
    failed = []
    try:
        seeds = [os.path.abspath(t) for t in args.trace]
        if shutil.which("lttng-sessiond"):
            seeds += record_seeds(os.path.abspath(args.record_trace),
                                  os.path.abspath(args.gen_trace), work)
        for path in seeds:
            sanity = subprocess.run([merge, path], capture_output=True, timeout=HANG_SECONDS)
            if sanity.returncode != 0:
                print(f"the seed trace {path} fails: {sanity.stderr!r}")
                return 1
        started = time.monotonic()
        counts = {0: 0, 2: 0}
        crashes = stalls = slowest = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(run_case, merge, seeds, args.seed, i, work, (*shape, path))
                       for shape in REGRESSIONS for i, path in enumerate(seeds)]
            futures += [pool.submit(run_case, merge, seeds, args.seed, i, work)
                        for i in range(args.first, args.first + args.cases)]
            for future in concurrent.futures.as_completed(futures):
                outcome = future.result()
                if outcome["status"] in counts:
                    counts[outcome["status"]] += 1
                crashes += "decoder crashed" in outcome["reason"]
                stalls += "no progress" in outcome["reason"]
                slowest = max(slowest, outcome["seconds"])
                finished = counts[0] + counts[2] + len(failed) + 1
                if args.progress and finished % args.progress == 0:
                    print(f"fuzz-merge: {finished} of {len(futures)} cases done, "
                          f"{time.monotonic() - started:.0f} s", flush=True)
                if outcome["problems"]:
                    failed.append(outcome)
                    kept = os.path.join(keep, os.path.basename(outcome["dir"]))
                    if kept != outcome["dir"]:
                        shutil.move(outcome["dir"], kept)
                    which = (f"regression {outcome['regression']} on seed trace {outcome['index']}"
                             if outcome["regression"] else
                             f"case {outcome['index']} (seed {args.seed})")
                    print(f"FAIL {which}: "
                          f"{'; '.join(outcome['problems'])[:3000]}\n"
                          f"  mutations: {outcome['what']}\n"
                          f"  command: {' '.join(outcome['command'])}\n  kept in {kept}")
        def failing(kind):
            return sum(any(p.startswith(kind) for p in f["problems"]) for f in failed)
        print(f"fuzz-merge: seed {args.seed}, {args.cases} cases and "
              f"{len(futures) - args.cases} regression cases in "
              f"{time.monotonic() - started:.0f} s: {counts[0]} exit 0, {counts[2]} exit 2 "
              f"({crashes} decoder crashes and {stalls} stalls contained), slowest "
              f"{slowest:.1f} s, {len(failed)} failing ({failing('hang')} hangs, "
              f"{failing('exit -')} aborts, {failing('sanitizer report')} sanitizer reports)")
    finally:
        if not failed or args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
