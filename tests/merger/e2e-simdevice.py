#!/usr/bin/env python3
"""e2e-simdevice.py MERGE RECORD_TRACE WORKLOAD SHIM SIMDEVICE: runs l0-workload under the real
shim on the simulated device (with its ground-truth log), records it, and checks the merger's
tally against what the program did: API call counts exact, device executions per name exact,
device totals within the intervals' own uncertainty of the truth; mangled kernel names demangled
(tally and timeline alike), kept with --mangled, shortened by --max-name-size; memory traffic per
direction with the exact bytes copied, its device time that of the copies' device rows and GB/s
bytes over that time, in JSON and text; with -k, kernel rows split by launch shape exactly as the
device saw them (its truth lines' group count, group size and SIMD width), the shim recording a
shape only when it changed and copies' pointers in their own events. Then device telemetry
(ZEPROF_SAMPLE_MS, `l0-workload busy`): each sampled interval's engine activity against the
truth's busy time in it, the merger's counters and summary against the raw readings, a device
without Sysman (one line, a normal run, no samples), a Sysman call that never returns (a normal
run, no samples) and the node's sampling lock held elsewhere (no samples). Exit 77 (skip)
when the shim or the simulated device is not built, or LTTng cannot record here."""
import collections
import fcntl
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED_API_CALLS = {
    "zeCommandListAppendLaunchKernel": 11,
    "zeCommandListAppendMemoryCopy": 8,
    "zeCommandListAppendMemoryFill": 1,
    "zeEventHostSynchronize": 19,
    "zeCommandQueueExecuteCommandLists": 3,
    "zeCommandQueueSynchronize": 3,
    "zeCommandListDestroy": 3,
}
EXPECTED_DEVICE_CALLS = {"zesim_spin": 11, "zeCommandListAppendMemoryCopy": 8,
                         "zeCommandListAppendMemoryFill": 1}
# direction: (bytes, appends), as l0-workload.c copies (4 x 64 KiB between zeMemAllocHost buffers,
# then one append per TRAFFIC_* size)
EXPECTED_TRAFFIC = {"host to host": (4 * 65536, 4), "host to device": (8192, 1),
                    "device to host": (4096, 1), "device to device": (2048, 1),
                    "shared": (1024, 1), "fill device": (512, 1)}
# (kernel, group count, group size, simd): executions, as l0-workload.c launches them
EXPECTED_SHAPES = {("zesim_spin", (1, 1, 1), (1, 1, 1), 32): 4,
                   ("zesim_spin", (3, 2, 1), (16, 2, 1), 32): 4,
                   ("zesim_spin", (1, 1, 1), (16, 2, 1), 32): 3,
                   ("_ZTSZ4mainEUlvE_", (1, 1, 1), (1, 1, 1), 32): 1,
                   ("_Z3addPfS_", (1, 1, 1), (1, 1, 1), 32): 1}
# kernel_shape events: one per change of shape per thread and kernel name (the three of
# zesim_spin, one each for the two others), not one per launch (13 appends of kernels)
EXPECTED_SHAPE_EVENTS = 5
# readable name: the name the program gave zeKernelCreate (and the truth file records)
DEMANGLED = {"main::{lambda()#1}": "_ZTSZ4mainEUlvE_", "add(float*, float*)": "_Z3addPfS_"}
TICK_NS = 1e9 / 19200000  # the simulated device's default timer



def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=120, **kwargs)


def main():
    merge, record_trace, workload, shim, simdevice = sys.argv[1:6]
    for path in (shim, simdevice):
        if not os.path.exists(path):
            print(f"{path} not built: skipping")
            return 77
    if not shutil.which("lttng-sessiond"):
        print("lttng-sessiond not found: skipping")
        return 77
    work = tempfile.mkdtemp(prefix="zeprof-simdevice-")
    try:
        trace = os.path.join(work, "trace")
        truth = os.path.join(work, "truth.jsonl")
        # Only the workload gets the shim, not the LTTng daemons tests/harness/record starts. Under
        # sanitizers the preloaded shim comes before the sanitizer runtime: allow that.
        asan = os.environ.get("ASAN_OPTIONS", "")
        asan = f"{asan}:verify_asan_link_order=0" if asan else "verify_asan_link_order=0"
        recorded = run([record_trace, trace, "--", "env", f"LD_PRELOAD={os.path.abspath(shim)}",
                        f"ZE_ENABLE_ALT_DRIVERS={os.path.abspath(simdevice)}",
                        f"ZESIM_TRUTH={truth}", f"ASAN_OPTIONS={asan}", workload])
        check(recorded.returncode == 0, f"workload under the shim: {recorded.stdout} "
               f"{recorded.stderr}")
        if recorded.returncode != 0:
            return exit_status()
        timeline = os.path.join(work, "timeline.json")
        result = run([merge, "-j", "-l", timeline, trace])
        check(result.returncode == 0, f"zeprof-merge: {result.stderr}")
        if result.returncode != 0:
            return exit_status()
        check_merge(json.loads(result.stdout), truth, timeline)
        check_names(merge, trace, json.loads(result.stdout), timeline)
        check_traffic(merge, trace, json.loads(result.stdout))
        check_shapes(merge, trace, truth, json.loads(result.stdout))
        check_partial(merge, trace, work, result.stdout, timeline)
        check_engines(merge, trace, truth, timeline, work)
        # Without sampling the telemetry provider is never loaded: its events are not even
        # registered (not in the trace's metadata).
        check(not any("zeprof_sample" in read_metadata(os.path.join(root, "metadata"))
                      for root, _, files in os.walk(trace) if "metadata" in files),
              "zeprof_sample registered in a run without sampling")
        check_telemetry(merge, record_trace, workload, shim, simdevice, work, asan)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exit_status()


# The engines l0-workload's queues were created on (ordinal.index), named by the simulated device's
# queue groups: 0 computes (and copies), 1 only copies.
EXPECTED_ENGINES = {"compute engine 0.2", "copy engine 1.1", "compute engine 0.1"}


def truth_engines(truth_path):
    """(name, engine) of each execution of the program's own work the device's truth log records
    (not the barriers and timestamp queries the shim's profiling adds)."""
    engines = collections.Counter()
    programs = set(EXPECTED_DEVICE_CALLS) | set(DEMANGLED.values())
    with open(truth_path, encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            if entry["name"] not in programs:
                continue
            kind = "compute" if entry["engine"].startswith("0.") else "copy"
            engines[(entry["name"], f"{kind} engine {entry['engine']}")] += 1
    return engines


def check_engines(merge, trace, truth_path, timeline_path, work):
    """Each device slice sits on the engine the truth says it ran on: in JSON the queue lane's
    name carries the engine; in Perfetto (decoded with protoc, when installed) the queue's track
    is a child of that engine's track, itself a child of the device's."""
    truth = truth_engines(truth_path)
    check({engine for _, engine in truth} == EXPECTED_ENGINES,
          f"truth engines {sorted({e for _, e in truth})}, expected {sorted(EXPECTED_ENGINES)}")
    with open(timeline_path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    shown = collections.Counter()
    for e in events:
        if e["ph"] == "X" and e["cat"] == "device":
            engine = lanes.get((e["pid"], e["tid"]), "").split(": ")[0]
            shown[(DEMANGLED.get(e["name"], e["name"]), engine)] += 1
    check(shown == truth, "JSON: every device slice on the lane of its engine",
          f"timeline {sorted(shown.items())}\ntruth {sorted(truth.items())}")
    protoc = shutil.which("protoc")
    proto = os.path.join(HERE, "..", "..", "merger", "perfetto_trace.proto")
    if not protoc:
        print("protoc not found: the Perfetto engine tracks are not checked here")
        return
    spec = importlib.util.spec_from_file_location("check_perfetto",
                                                  os.path.join(HERE, "check-perfetto.py"))
    perfetto = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(perfetto)
    path = os.path.join(work, "timeline.pftrace")
    result = run([merge, "-l", path, trace])
    check(result.returncode == 0, f"zeprof-merge -l timeline.pftrace: {result.stderr}")
    if result.returncode != 0:
        return
    tracks, slices, _, _, _, _, parents = perfetto.perfetto_view(
        perfetto.decode(protoc, proto, path), "simdevice")
    devices = {uuid for uuid, parent in parents.items() if parent is None}
    placed = collections.Counter()
    for uuid, spans in slices.items():
        engine = parents.get(uuid)
        for span in spans:
            if span[3] == "device":
                under_device = parents.get(engine) in devices
                placed[(DEMANGLED.get(span[2], span[2]),
                        tracks.get(engine) if under_device else None)] += 1
    check(placed == truth, "Perfetto: every device slice on a queue track under its engine's "
          "track under the device's", f"perfetto {sorted(placed.items())}")


SAMPLE_MS = 20
BUSY_DEVICE_MIB = 48  # l0-workload busy: its one device allocation
IDLE_W, BUSY_W = 20, 120  # the simulated device's power model (tests/simdevice/sim_sysman.c)
COUNTERS = {"utilization %", "frequency MHz", "power W", "memory MiB"}
SAMPLE_FIELDS = ("valid", "engine_active_us", "engine_timestamp_us", "frequency_mhz",
                 "memory_used")


def check_partial(merge, trace, work, tally, timeline):
    """A partial (--reduce) of the trace gives the same tally (memory traffic, -k shapes, -e)
    and timeline, byte for byte."""
    partial = os.path.join(work, "trace.partial")
    reduced = run([merge, "--reduce", trace, "-o", partial])
    check(reduced.returncode == 0, f"zeprof-merge --reduce: {reduced.stderr}")
    from_partial = os.path.join(work, "timeline-from-partial.json")
    check(run([merge, "-j", "-l", from_partial, partial]).stdout == tally,
          "the JSON tally from the partial differs")
    with open(timeline, "rb") as raw_file, open(from_partial, "rb") as partial_file:
        check(raw_file.read() == partial_file.read(), "the timeline from the partial differs")
    for options in (["-k"], ["-k", "-j", "-e"]):
        check(run([merge, *options, trace]).stdout == run([merge, *options, partial]).stdout,
              f"zeprof-merge {' '.join(options)} from the partial differs")


def record_busy(record_trace, workload, shim, simdevice, work, name, asan, *extra):
    trace = os.path.join(work, name)
    truth = os.path.join(work, name + ".jsonl")
    recorded = run([record_trace, trace, "--", "env", f"LD_PRELOAD={os.path.abspath(shim)}",
                    f"ZE_ENABLE_ALT_DRIVERS={os.path.abspath(simdevice)}", f"ZESIM_TRUTH={truth}",
                    f"ASAN_OPTIONS={asan}", f"ZEPROF_SAMPLE_MS={SAMPLE_MS}",
                    "ZES_ENABLE_SYSMAN=1", *extra, workload, "busy"])
    return trace, truth, recorded


def read_metadata(path):
    with open(path, "rb") as metadata:
        return metadata.read().decode("latin-1")


def raw_samples(merge, trace):
    """The device_sample readings, in time order, from zeprof-merge -t."""
    dump = run([merge, "-t", trace])
    samples = []
    for line in dump.stdout.splitlines():
        if "zeprof_sample:device_sample" not in line:
            continue
        fields = dict(re.findall(r"(\w+) = ([0-9.]+)", line.split("} {", 1)[1]))
        samples.append({key: float(fields.get(key, "nan")) for key in SAMPLE_FIELDS})
    return samples


def busy_us_between(truth, start_us, end_us):
    """Microseconds of [start_us, end_us) in which the truth's kernels ran (one queue: no
    overlap), on CLOCK_MONOTONIC like the simulated device's engine timestamps."""
    total = 0.0
    for run_ in truth:
        total += max(0.0, min(end_us, run_["end_ns"] / 1e3) - max(start_us, run_["start_ns"] / 1e3))
    return total


def check_telemetry(merge, record_trace, workload, shim, simdevice, work, asan):
    trace, truth_path, recorded = record_busy(record_trace, workload, shim, simdevice, work,
                                              "sampled", asan)
    check(recorded.returncode == 0 and "zeprof:" not in recorded.stderr,
          f"sampled workload: {recorded.returncode} {recorded.stderr}")
    if recorded.returncode != 0:
        return
    with open(truth_path) as truth_file:
        truth = [json.loads(line) for line in truth_file if '"kind":"kernel"' in line]
    samples = raw_samples(merge, trace)
    # The first reading comes at zeInit, the last at exit: every interval in between, one per
    # SAMPLE_MS or so (at least one per 40 ms spin and idle gap of the workload's 320 ms).
    check(len(samples) >= 6 and all(sample["valid"] == 15 for sample in samples),
          f"{len(samples)} samples, valid {[sample['valid'] for sample in samples]}")
    if len(samples) < 2:
        return
    # Engine activity is the device's real busy time: in each interval, the truth's busy time
    # within 2 us (both counters are whole microseconds) plus 5 us per kernel that ran in it
    # (the device counts a command busy from just before its truth start_ns).
    utilizations = []
    for before, after in zip(samples, samples[1:]):
        start, end = before["engine_timestamp_us"], after["engine_timestamp_us"]
        active = after["engine_active_us"] - before["engine_active_us"]
        expected = busy_us_between(truth, start, end)
        kernels = sum(1 for run_ in truth if run_["start_ns"] / 1e3 < end
                      and run_["end_ns"] / 1e3 > start)
        check(abs(active - expected) <= 2 + 5 * kernels,
              f"interval {start}-{end} us: engine active {active} us, truth busy {expected:.1f} us")
        # Both counters are whole microseconds: a fully busy interval may read 1 us more busy
        # than long, which the merger clamps to 100%.
        utilizations.append(min(100.0, 100.0 * active / (end - start)))
    truth_busy_ns = sum(run_["end_ns"] - run_["start_ns"] for run_ in truth)
    check(samples[0]["engine_active_us"] == 0 and samples[0]["memory_used"] == 0,
          f"the first reading is not before the work: {samples[0]}")
    check(all(sample["frequency_mhz"] in (300, 1600) for sample in samples),
          f"frequencies {[sample['frequency_mhz'] for sample in samples]}")

    timeline = os.path.join(work, "sampled.json")
    merged = run([merge, "-j", "-l", timeline, trace])
    check(merged.returncode == 0, f"zeprof-merge -j: {merged.stderr}")
    if merged.returncode != 0:
        return
    tally = json.loads(merged.stdout)
    check(not any(row["name"].startswith("zes") for row in tally["api"]),
          "the sampler's own Sysman calls are in the tally")
    rows = tally.get("telemetry", [])
    check(len(rows) == 1, f"telemetry rows: {rows}")
    if rows:
        row = rows[0]
        check(row["samples"] == len(samples), f"samples {row['samples']}, read {len(samples)}")
        check(abs(row["busy_ns"] - truth_busy_ns) <= 2000 + 5000 * len(truth),
              f"sampled busy {row['busy_ns']} ns, truth {truth_busy_ns} ns")
        check(abs(row["utilization_max_pct"] - max(utilizations)) < 1e-6,
              f"max utilization {row['utilization_max_pct']}, readings {max(utilizations)}")
        check(row["memory_peak_mib"] == BUSY_DEVICE_MIB, f"memory peak {row['memory_peak_mib']}")
        # Energy counter = idle power all the time + the difference while busy.
        expected_w = IDLE_W + (BUSY_W - IDLE_W) * row["utilization_mean_pct"] / 100
        check(abs(row["power_mean_w"] - expected_w) < 0.5,
              f"mean power {row['power_mean_w']} W, {expected_w} W expected")
    checked = run([sys.executable, os.path.join(HERE, "check-timeline.py"), timeline])
    check(checked.returncode == 0, f"sampled timeline: {checked.stderr}")
    with open(timeline) as timeline_file:
        events = json.load(timeline_file)["traceEvents"]
    counters = [event for event in events if event.get("ph") == "C"]
    names = {event["pid"]: event["args"]["name"] for event in events
             if event.get("ph") == "M" and event.get("name") == "process_name"}
    check({event["name"] for event in counters} == COUNTERS,
          f"counter tracks {sorted({event['name'] for event in counters})}")
    check(all("Simulated GPU 0" in names.get(event["pid"], "") for event in counters),
          "counters not on the device's lane")
    drawn = [event["args"]["value"] for event in counters if event["name"] == "utilization %"]
    check(len(drawn) == len(utilizations) and
          all(abs(a - b) < 0.001 for a, b in zip(drawn, utilizations)),
          f"utilization counters {drawn}, readings {utilizations}")
    text = run([merge, trace]).stdout
    check("Device telemetry" in text and "Simulated GPU 0" in text.split("Device telemetry")[-1],
          "no Device telemetry table in the text tally")
    # With anomalies (the golden generated trace has some), their footer is the last line, after
    # the telemetry table.
    anomalous = os.path.join(HERE, "golden", "gen", "traces", "host")
    lines = run([merge, trace, anomalous]).stdout.rstrip("\n").splitlines()
    check(len(lines) > 2 and lines[-1].startswith("Anomalies: ") and "Device telemetry" in lines,
          f"the anomaly footer is not last after the telemetry: {lines[-3:]}")
    # A partial (--reduce) carries the telemetry exactly: tally and timeline, byte for byte.
    partial = os.path.join(work, "sampled.partial")
    reduced = run([merge, "--reduce", trace, "-o", partial])
    check(reduced.returncode == 0, f"zeprof-merge --reduce: {reduced.stderr}")
    from_partial = os.path.join(work, "sampled-from-partial.json")
    check(run([merge, "-l", from_partial, partial]).stdout == text,
          "the text tally from the partial differs")
    check(run([merge, "-j", partial]).stdout == merged.stdout,
          "the JSON tally (telemetry rows) from the partial differs")
    with open(timeline, "rb") as raw_file, open(from_partial, "rb") as partial_file:
        check(raw_file.read() == partial_file.read(),
              "the timeline (counter tracks) from the partial differs")

    # No Sysman on the device: one line, the program's normal run and output, no sample.
    trace, _, recorded = record_busy(record_trace, workload, shim, simdevice, work, "no-sysman",
                                     asan, "ZESIM_SYSMAN=0")
    lines = [line for line in recorded.stderr.splitlines() if line.startswith("zeprof:")]
    check(recorded.returncode == 0 and "busy done" in recorded.stdout and len(lines) == 1 and
          "device telemetry not sampled" in lines[0],
          f"without Sysman: exit {recorded.returncode}, stderr {recorded.stderr!r}")
    check(not raw_samples(merge, trace), "samples recorded without Sysman")

    # A Sysman call that never returns: the program still runs and ends as usual (zeInit waits
    # for the first reading one second at most, the exit for the last one as long).
    trace, _, recorded = record_busy(record_trace, workload, shim, simdevice, work, "hung",
                                     asan, "ZESIM_HANG_SYSMAN=1")
    check(recorded.returncode == 0 and "busy done" in recorded.stdout and
          "zeprof:" not in recorded.stderr,
          f"with a Sysman call that hangs: exit {recorded.returncode}, {recorded.stderr!r}")
    check(not raw_samples(merge, trace), "samples recorded from a hung Sysman call")

    # One sampler per node: with the lock held by another process, this one does not sample.
    lock_path = os.path.join(work, "sample.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        trace, _, recorded = record_busy(record_trace, workload, shim, simdevice, work, "locked",
                                         asan, f"ZEPROF_SAMPLE_LOCK={lock_path}")
    check(recorded.returncode == 0 and "zeprof:" not in recorded.stderr,
          f"with the node's lock held elsewhere: {recorded.returncode} {recorded.stderr!r}")
    check(not raw_samples(merge, trace), "samples recorded while another process held the lock")


def check_merge(tally, truth_path, timeline_path):
    api = {row["name"]: row for row in tally["api"]}
    for name, calls in EXPECTED_API_CALLS.items():
        got = api.get(name, {}).get("calls")
        check(got == calls, f"{name}: {got} calls, the program made {calls}")
    check(all(row["errors"] == 0 for row in tally["api"]), "errors reported")
    interesting = ("orphan_exits", "synthetic_closes", "discarded_events", "lost_timings",
                   "unmatched_timings", "unanchored_timings", "inverted_intervals")
    bad = {k: v for k, v in tally["anomalies"].items() if k in interesting and v}
    check(not bad, f"anomalies {bad}")

    truth_calls, truth_total = collections.Counter(), collections.Counter()
    with open(truth_path, encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            truth_calls[entry["name"]] += 1
            truth_total[entry["name"]] += entry["end_ns"] - entry["start_ns"]
    with open(timeline_path, encoding="utf-8") as f:
        doc = json.load(f)
    uncertainty = collections.Counter()
    for event in doc["traceEvents"]:
        if event["ph"] == "X" and event["cat"] == "device":
            uncertainty[event["name"]] += event["args"]["uncertainty_ns"]
    device = {row["name"]: row for row in tally["device"]}
    for name, calls in EXPECTED_DEVICE_CALLS.items():
        row = device.get(name)
        check(row is not None, f"no device row {name}")
        if not row:
            continue
        check(row["calls"] == calls == truth_calls[name],
               f"{name}: {row['calls']} executions, truth {truth_calls[name]}, expected {calls}")
        # Each end of each interval is known to its uncertainty, and ticks are whole.
        tolerance = 2 * uncertainty[name] + 2 * TICK_NS * calls
        check(abs(row["total_ns"] - truth_total[name]) <= tolerance,
               f"{name}: total {row['total_ns']} ns, truth {truth_total[name]} ns, "
               f"tolerance {tolerance:.0f} ns")
    checked = run([sys.executable, os.path.join(HERE, "check-timeline.py"), timeline_path])
    check(checked.returncode == 0, f"timeline: {checked.stderr}")


def check_traffic(merge, trace, tally):
    """Bytes per direction exact; device time the copies' (and the fill's) own device time; GB/s
    bytes per nanosecond; the text tally's section says the same."""
    rows = {row["direction"]: row for row in tally["memory_traffic"]}
    got = {direction: (row["bytes"], row["calls"]) for direction, row in rows.items()}
    check(got == EXPECTED_TRAFFIC, f"memory traffic {got}, expected {EXPECTED_TRAFFIC}")
    device = {row["name"]: row for row in tally["device"]}
    copy_row = device.get("zeCommandListAppendMemoryCopy", {})
    fill_row = device.get("zeCommandListAppendMemoryFill", {})
    copies = sum(row["device_ns"] for d, row in rows.items() if not d.startswith("fill"))
    fills = sum(row["device_ns"] for d, row in rows.items() if d.startswith("fill"))
    check(copies == copy_row.get("total_ns"), f"copies' traffic time {copies} ns, row {copy_row}")
    check(fills == fill_row.get("total_ns"), f"fills' traffic time {fills} ns, row {fill_row}")
    for direction, row in rows.items():
        check(row["device_ns"] > 0 and
              abs(row["gb_per_s"] - row["bytes"] / row["device_ns"]) <= 1e-9 * row["gb_per_s"],
              f"{direction}: {row['gb_per_s']} GB/s for {row['bytes']} B in {row['device_ns']} ns")
    text = run([merge, trace]).stdout.splitlines()
    section = text[text.index("Memory traffic") + 2:] if "Memory traffic" in text else []
    shown = {}
    for line in section:
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) != 5:
            break
        shown[cells[0]] = (int(cells[1]), int(cells[2]), cells[3], cells[4])
    expected = {d: (row["bytes"], row["calls"], f"{row['device_ns']}ns",
                    f"{row['bytes'] / row['device_ns']:.3f}") for d, row in rows.items()}
    check(shown == expected, f"text memory traffic {shown}, JSON {expected}")


def check_shapes(merge, trace, truth_path, tally):
    """-k: the kernel rows per launch shape are the device's own (truth), in JSON fields and in
    the text tally's labels; their times add up to the kernels' device rows; no "kernels" without
    -k; the shim recorded shapes only when they changed, and nothing new on kernel appends."""
    check("kernels" not in tally, "a kernel detail without -k")
    truth = collections.Counter()
    with open(truth_path, encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            if entry["kind"] == "kernel":
                truth[(entry["name"], tuple(entry["group_count"]), tuple(entry["group_size"]),
                       entry["simd"])] += 1
    check(truth == EXPECTED_SHAPES, f"truth shapes {dict(truth)}, expected {EXPECTED_SHAPES}")
    result = run([merge, "-k", "-j", trace])
    check(result.returncode == 0, f"zeprof-merge -k -j: {result.stderr}")
    if result.returncode != 0:
        return
    rows = json.loads(result.stdout)["kernels"]
    got = collections.Counter()
    totals = collections.Counter()
    labels = {}
    for row in rows:
        raw = DEMANGLED.get(row["kernel"], row["kernel"])
        key = (raw, tuple(row["group_count"]), tuple(row["group_size"]), row["simd"])
        got[key] += row["calls"]
        totals[row["kernel"]] += row["total_ns"]
        labels[row["name"]] = row["calls"]
    check(got == truth, f"-k shapes {dict(got)}, truth {dict(truth)}")
    device = {row["name"]: row["total_ns"] for row in tally["device"]}
    for kernel, total in totals.items():
        check(total == device.get(kernel), f"{kernel}: shapes' total {total} ns, row "
               f"{device.get(kernel)} ns")
    check(labels.get("zesim_spin [3,2,1]x[16,2,1] simd 32") == 4, f"-k labels {labels}")
    text = run([merge, "-k", trace]).stdout.splitlines()
    section = text[text.index("Kernel detail") + 2:] if "Kernel detail" in text else []
    shown = {}
    for line in section:
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) != 7:
            break
        shown[cells[0]] = int(cells[3])
    check(shown == labels, f"text kernel detail {shown}, JSON {labels}")
    events = run([merge, "-t", trace]).stdout.splitlines()
    shapes = sum(" zeprof_device:kernel_shape " in line for line in events)
    transfers = sum(" zeprof_device:transfer " in line for line in events)
    check(shapes == EXPECTED_SHAPE_EVENTS,
          f"{shapes} kernel_shape events, expected {EXPECTED_SHAPE_EVENTS}")
    copies = EXPECTED_DEVICE_CALLS["zeCommandListAppendMemoryCopy"] + \
        EXPECTED_DEVICE_CALLS["zeCommandListAppendMemoryFill"]
    check(transfers == copies, f"{transfers} transfer events, {copies} copies and fills")
    appends = [line for line in events if " zeprof_device:append " in line]
    check(appends and not any("dst =" in line for line in appends),
          "append events carry pointers")


def check_names(merge, trace, tally, timeline_path):
    """Kernel names: demangled in the tally and the timeline (the same names), raw with
    --mangled, cut in the text tally only by --max-name-size; a bad size is refused."""
    names = {row["name"] for row in tally["device"]}
    check(set(DEMANGLED) <= names and not names & set(DEMANGLED.values()),
           f"device rows {sorted(names)}")
    with open(timeline_path, encoding="utf-8") as f:
        slices = {e["name"] for e in json.load(f)["traceEvents"]
                  if e["ph"] == "X" and e["cat"] == "device"}
    check(slices == names, f"timeline names {sorted(slices)}, tally names {sorted(names)}")
    raw = run([merge, "-j", "--mangled", trace])
    raw_names = {row["name"] for row in json.loads(raw.stdout)["device"]} if not raw.returncode \
        else set()
    check(set(DEMANGLED.values()) <= raw_names and not raw_names & set(DEMANGLED),
           f"--mangled device rows {sorted(raw_names)}")
    short = run([merge, "--max-name-size", "10", trace]).stdout.splitlines()
    for line in ("main::{...", "add(flo...", "zesim_spin", "zeComma..."):
        check(any(row.startswith(line + " | ") for row in short), f"no row {line} in {short}")
    wide = run([merge, "-j", "--max-name-size", "10", trace])
    check(not wide.returncode and {row["name"] for row in json.loads(wide.stdout)["device"]}
           == names, "--max-name-size changed the JSON names")
    for bad, shown in (("0", "0"), ("-3", "-3"), ("ten", "ten"), ("", ""), ("1\n2", "1\\n2")):
        refused = run([merge, "--max-name-size", bad, trace])
        check(refused.returncode == 2 and not refused.stdout and
               refused.stderr ==
               f"Failed to parse options: option=--max-name-size, value={shown}\n",
               f"--max-name-size {bad!r}: exit {refused.returncode}, {refused.stderr!r}")


if __name__ == "__main__":
    sys.exit(main())
