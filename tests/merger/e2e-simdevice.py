#!/usr/bin/env python3
"""e2e-simdevice.py MERGE RECORD_TRACE WORKLOAD SHIM SIMDEVICE: runs l0-workload under the real
shim on the simulated device (with its ground-truth log), records it, and checks the merger's
tally against what the program did: API call counts exact, device executions per name exact,
device totals within the intervals' own uncertainty of the truth; mangled kernel names demangled
(tally and timeline alike), kept with --mangled, shortened by --max-name-size. Then device
telemetry (ZEPROF_SAMPLE_MS, `l0-workload busy`): each sampled interval's engine activity against
the truth's busy time in it, the merger's counters and summary against the raw readings, a
device without Sysman (one line, a normal run, no samples), a Sysman call that never returns (a
normal run, no samples) and the node's sampling lock held elsewhere (no samples). Exit 77 (skip)
when the shim or the simulated device is not built, or LTTng cannot record here."""
import collections
import fcntl
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
    "zeCommandListAppendMemoryCopy": 4,
    "zeEventHostSynchronize": 14,
    "zeCommandQueueExecuteCommandLists": 3,
    "zeCommandQueueSynchronize": 3,
    "zeCommandListDestroy": 2,
}
EXPECTED_DEVICE_CALLS = {"zesim_spin": 11, "zeCommandListAppendMemoryCopy": 4}
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
        # Without sampling the telemetry provider is never loaded: its events are not even
        # registered (not in the trace's metadata).
        check(not any("zeprof_sample" in read_metadata(os.path.join(root, "metadata"))
                      for root, _, files in os.walk(trace) if "metadata" in files),
              "zeprof_sample registered in a run without sampling")
        check_telemetry(merge, record_trace, workload, shim, simdevice, work, asan)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exit_status()


SAMPLE_MS = 20
BUSY_DEVICE_MIB = 48  # l0-workload busy: its one device allocation
IDLE_W, BUSY_W = 20, 120  # the simulated device's power model (tests/simdevice/sim_sysman.c)
COUNTERS = {"utilization %", "frequency MHz", "power W", "memory MiB"}
SAMPLE_FIELDS = ("valid", "engine_active_us", "engine_timestamp_us", "frequency_mhz",
                 "memory_used")


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
