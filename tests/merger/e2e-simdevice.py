#!/usr/bin/env python3
"""e2e-simdevice.py MERGE RECORD_TRACE WORKLOAD SHIM SIMDEVICE: runs l0-workload under the real
shim on the simulated device (with its ground-truth log), records it, and checks the merger's
tally against what the program did: API call counts exact, device executions per name exact,
device totals within the intervals' own uncertainty of the truth; mangled kernel names demangled
(tally and timeline alike), kept with --mangled, shortened by --max-name-size. Exit 77 (skip)
when the shim or the simulated device is not built, or LTTng cannot record here."""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

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

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)


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
        # Only the workload gets the shim, not the LTTng daemons record-trace starts. Under
        # sanitizers the preloaded shim comes before the sanitizer runtime: allow that.
        asan = os.environ.get("ASAN_OPTIONS", "")
        asan = f"{asan}:verify_asan_link_order=0" if asan else "verify_asan_link_order=0"
        recorded = run([record_trace, trace, "--", "env", f"LD_PRELOAD={os.path.abspath(shim)}",
                        f"ZE_ENABLE_ALT_DRIVERS={os.path.abspath(simdevice)}",
                        f"ZESIM_TRUTH={truth}", f"ASAN_OPTIONS={asan}", workload])
        expect(recorded.returncode == 0, f"workload under the shim: {recorded.stdout} "
               f"{recorded.stderr}")
        if recorded.returncode != 0:
            return report()
        timeline = os.path.join(work, "timeline.json")
        result = run([merge, "-j", "-l", timeline, trace])
        expect(result.returncode == 0, f"zeprof-merge: {result.stderr}")
        if result.returncode != 0:
            return report()
        check(json.loads(result.stdout), truth, timeline)
        check_names(merge, trace, json.loads(result.stdout), timeline)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report()


def report():
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


def check(tally, truth_path, timeline_path):
    api = {row["name"]: row for row in tally["api"]}
    for name, calls in EXPECTED_API_CALLS.items():
        got = api.get(name, {}).get("calls")
        expect(got == calls, f"{name}: {got} calls, the program made {calls}")
    expect(all(row["errors"] == 0 for row in tally["api"]), "errors reported")
    interesting = ("orphan_exits", "synthetic_closes", "discarded_events", "lost_timings",
                   "unmatched_timings", "unanchored_timings", "inverted_intervals")
    bad = {k: v for k, v in tally["anomalies"].items() if k in interesting and v}
    expect(not bad, f"anomalies {bad}")

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
        expect(row is not None, f"no device row {name}")
        if not row:
            continue
        expect(row["calls"] == calls == truth_calls[name],
               f"{name}: {row['calls']} executions, truth {truth_calls[name]}, expected {calls}")
        # Each end of each interval is known to its uncertainty, and ticks are whole.
        tolerance = 2 * uncertainty[name] + 2 * TICK_NS * calls
        expect(abs(row["total_ns"] - truth_total[name]) <= tolerance,
               f"{name}: total {row['total_ns']} ns, truth {truth_total[name]} ns, "
               f"tolerance {tolerance:.0f} ns")
    checked = run([sys.executable, os.path.join(HERE, "check-timeline.py"), timeline_path])
    expect(checked.returncode == 0, f"timeline: {checked.stderr}")


def check_names(merge, trace, tally, timeline_path):
    """Kernel names: demangled in the tally and the timeline (the same names), raw with
    --mangled, cut in the text tally only by --max-name-size; a bad size is refused."""
    names = {row["name"] for row in tally["device"]}
    expect(set(DEMANGLED) <= names and not names & set(DEMANGLED.values()),
           f"device rows {sorted(names)}")
    with open(timeline_path, encoding="utf-8") as f:
        slices = {e["name"] for e in json.load(f)["traceEvents"]
                  if e["ph"] == "X" and e["cat"] == "device"}
    expect(slices == names, f"timeline names {sorted(slices)}, tally names {sorted(names)}")
    raw = run([merge, "-j", "--mangled", trace])
    raw_names = {row["name"] for row in json.loads(raw.stdout)["device"]} if not raw.returncode \
        else set()
    expect(set(DEMANGLED.values()) <= raw_names and not raw_names & set(DEMANGLED),
           f"--mangled device rows {sorted(raw_names)}")
    short = run([merge, "--max-name-size", "10", trace]).stdout.splitlines()
    for line in ("main::{...", "add(flo...", "zesim_spin", "zeComma..."):
        expect(any(row.startswith(line + " | ") for row in short), f"no row {line} in {short}")
    wide = run([merge, "-j", "--max-name-size", "10", trace])
    expect(not wide.returncode and {row["name"] for row in json.loads(wide.stdout)["device"]}
           == names, "--max-name-size changed the JSON names")
    for bad, shown in (("0", "0"), ("-3", "-3"), ("ten", "ten"), ("", ""), ("1\n2", "1\\n2")):
        refused = run([merge, "--max-name-size", bad, trace])
        expect(refused.returncode == 2 and not refused.stdout and
               refused.stderr ==
               f"Failed to parse options: option=--max-name-size, value={shown}\n",
               f"--max-name-size {bad!r}: exit {refused.returncode}, {refused.stderr!r}")


if __name__ == "__main__":
    sys.exit(main())
