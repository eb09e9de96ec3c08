#!/usr/bin/env python3
"""e2e-golden.py MERGE GEN_TRACE RECORD_TRACE: records gen-trace's scenario with a private LTTng
session daemon and checks what zeprof-merge makes of it: call counts, names, anomalies, device
totals (from the ticks gen-trace used, within the anchors' uncertainty), -e rows, the timeline
and the -t dump. Exit 77 (skip) when LTTng cannot record here."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

EXPECTED_API_CALLS = {
    "zeInit": 1,
    "zeDeviceGet": 4,
    "zeCommandListAppendLaunchKernel": 15,
    "zeCommandListAppendMemoryCopy": 4,
    "zeCommandQueueExecuteCommandLists": 3,
    "zeEventHostSynchronize": 21,  # 20 on the main thread + the worker's never-closed one
}
# name: (executions, ticks each at 10 MHz)
EXPECTED_DEVICE = {
    "gen_kernel_a": (10, 500),
    "gen_kernel_b": (3, 1000),
    "zeCommandListAppendMemoryCopy": (4, 200),
    "gen_kernel_c": (2, 300),
    "gen_kernel_inv": (1, 0),
}
EXPECTED_ANOMALIES = {
    "orphan_exits": 1,
    "synthetic_closes": 1,
    "inverted_intervals": 1,
    "unknown_events": 2,
    "lost_timings": 1,
    "discarded_events": 0,
    "discarded_packets": 0,
    "unmatched_timings": 0,
    "unanchored_timings": 0,
    "dropped_windows": 0,
    "incomplete_frames": 0,
}



def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=60, **kwargs)


def main():
    merge, gen_trace, record_trace = sys.argv[1:4]
    if not shutil.which("lttng-sessiond"):
        print("lttng-sessiond not found: skipping")
        return 77
    work = tempfile.mkdtemp(prefix="zeprof-golden-")
    try:
        trace = os.path.join(work, "trace")
        recorded = run([record_trace, trace, "--", gen_trace, "golden"])
        if recorded.returncode != 0:
            # LTTng is there (checked above): a recording that fails is a failure, not a skip.
            print(recorded.stderr)
            print("could not record the trace")
            return 1
        check_tally(merge, trace)
        check_extended(merge, trace)
        check_text(merge, trace)
        check_timeline(merge, trace, work)
        check_dump(merge, trace)
        check_two_hosts(merge, trace, work)
        check_discarded(merge, gen_trace, record_trace, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exit_status()


def tally(merge, trace, *options):
    result = run([merge, "-j", *options, trace])
    check(result.returncode == 0, f"zeprof-merge -j {options} exited {result.returncode}: "
           f"{result.stderr}")
    return json.loads(result.stdout)


def check_tally(merge, trace):
    data = tally(merge, trace)
    check((data["hosts"], data["processes"], data["threads"], data["devices"]) == (1, 1, 2, 1),
           f"header counts {data['hosts']}, {data['processes']}, {data['threads']}, "
           f"{data['devices']}")
    api = {row["name"]: row for row in data["api"]}
    calls = {name: row["calls"] for name, row in api.items()}
    check(calls == EXPECTED_API_CALLS, f"API calls {calls}")
    errors = {name: row["errors"] for name, row in api.items() if row["errors"]}
    check(errors == {"zeEventHostSynchronize": 1}, f"errors {errors}")
    for row in data["api"]:
        check(row["min_ns"] <= row["avg_ns"] <= row["max_ns"], f"min/avg/max of {row['name']}")
        check(row["total_ns"] >= row["max_ns"], f"total of {row['name']}")
    totals = [row["total_ns"] for row in data["api"]]
    check(totals == sorted(totals, reverse=True), "API rows not sorted by time")
    device = {row["name"]: row for row in data["device"]}
    check(set(device) == set(EXPECTED_DEVICE), f"device rows {sorted(device)}")
    for name, (executions, ticks) in EXPECTED_DEVICE.items():
        row = device.get(name)
        if not row:
            continue
        check(row["calls"] == executions, f"{name}: {row['calls']} executions")
        # Interpolating between two anchors ~2 ms apart, each known to ~0.5 us, the rate is
        # known to ~1e-3: allow that much of the total, and at least 100 ns per execution.
        truth = executions * ticks * 100
        tolerance = max(100 * executions, truth // 1000)
        check(abs(row["total_ns"] - truth) <= tolerance,
               f"{name}: total {row['total_ns']} ns, truth {truth} ns")
    check(data["anomalies"] == EXPECTED_ANOMALIES, f"anomalies {data['anomalies']}")


def check_extended(merge, trace):
    data = tally(merge, trace, "-e")
    rows = [row for row in data["api"] if row["name"] == "zeDeviceGet"]
    check(sorted(row["calls"] for row in rows) == [1, 3], f"-e zeDeviceGet rows {rows}")
    check(all({"hostname", "pid", "tid"} <= set(row) for row in data["api"]), "-e API keys")
    check(all({"hostname", "device"} <= set(row) for row in data["device"]), "-e device keys")
    check(len({row["tid"] for row in rows}) == 2, "-e rows not split by thread")


def check_text(merge, trace):
    result = run([merge, trace])
    check(result.returncode == 0, f"text tally exited {result.returncode}")
    lines = result.stdout.splitlines()
    check(lines and lines[0] == "zeprof: 1 host, 1 process, 2 threads, 1 device",
           f"header {lines[:1]}")
    check("API calls" in lines and "Device work" in lines, "table titles")
    footer = [line for line in lines if line.startswith("Anomalies: ")]
    check(footer == ["Anomalies: orphan_exits=1, synthetic_closes=1, inverted_intervals=1, "
                      "unknown_events=2, lost_timings=1"], f"footer {footer}")
    check(any(line.startswith("gen_kernel_a ") for line in lines), "gen_kernel_a row")


def check_timeline(merge, trace, work):
    path = os.path.join(work, "timeline.json")
    result = run([merge, "-l", path, trace])
    check(result.returncode == 0, f"-l exited {result.returncode}: {result.stderr}")
    checked = run([sys.executable, os.path.join(HERE, "check-timeline.py"), path])
    check(checked.returncode == 0, f"timeline check: {checked.stderr}")
    check(not [f for f in os.listdir(work) if ".tmp." in f], "temporary timeline left behind")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    meta = doc["metadata"]
    check(meta["hosts"] == [{"hostname": meta["hosts"][0]["hostname"], "role": "axis",
                              "offset_ns": 0, "bound_ns": 0, "method": "single",
                              "reference_ns": 0}],
           f"metadata.hosts {meta['hosts']}")
    check(meta["anomalies"] == EXPECTED_ANOMALIES, "metadata.anomalies")
    check(meta["devices"][0]["anchors"] == 2, "two anchors")
    events = doc["traceEvents"]
    device = [e for e in events if e["ph"] == "X" and e["cat"] == "device"]
    check(len(device) == 20, f"{len(device)} device slices")
    flows = [e for e in events if e["ph"] == "s"]
    check(len(flows) == 20, f"{len(flows)} flow arrows")
    overlapping = [e for e in device if e["name"] == "gen_kernel_c"]
    check(len(overlapping) == 2 and overlapping[0]["pid"] == overlapping[1]["pid"]
           and overlapping[0]["tid"] != overlapping[1]["tid"],
           "overlapping gen_kernel_c not on sibling lanes")
    # Each device slice starts after the append it comes from (less its uncertainty).
    start_of_flow = {e["id"]: e["ts"] for e in events if e["ph"] == "s"}
    finishes = [e for e in events if e["ph"] == "f"]
    slice_at = {(e["pid"], e["tid"], e["ts"]): e for e in device}
    for finish in finishes:
        slice_ = slice_at.get((finish["pid"], finish["tid"], finish["ts"]))
        check(slice_ is not None, f"flow {finish['id']} ends on no slice")
        if slice_:
            slack = slice_["args"]["uncertainty_ns"] / 1000
            check(slice_["ts"] + slack >= start_of_flow[finish["id"]],
                   f"{slice_['name']} starts before its append")
    api = [e for e in events if e["ph"] == "X" and e["cat"] == "api"]
    check(sum(1 for e in api if e["args"].get("synthetic")) == 1, "one synthetic slice")
    check(len(api) == sum(EXPECTED_API_CALLS.values()), f"{len(api)} API slices")


def check_dump(merge, trace):
    result = run([merge, "-t", trace])
    check(result.returncode == 0, f"-t exited {result.returncode}")
    lines = result.stdout.splitlines()
    reference = run(["babeltrace2", trace])
    if reference.returncode == 0:
        check(len(lines) == len(reference.stdout.splitlines()),
               f"-t printed {len(lines)} lines, babeltrace2 {len(reference.stdout.splitlines())}")
    stamps = [int(line.split(" ", 1)[0]) for line in lines]
    check(stamps == sorted(stamps), "-t not in time order")
    check(sum("zeprof_ze:gen_unknown" in line for line in lines) == 2, "-t unknown events")


def check_two_hosts(merge, trace, work):
    """The same trace given twice is two hosts: everything doubles, the second is unplaced."""
    path = os.path.join(work, "two.json")
    data = tally(merge, trace, "-l", path, trace)
    check(data["hosts"] == 2 and data["threads"] == 4, f"two hosts: {data['hosts']} hosts, "
           f"{data['threads']} threads")
    calls = {row["name"]: row["calls"] for row in data["api"]}
    check(calls == {name: 2 * n for name, n in EXPECTED_API_CALLS.items()}, f"two hosts {calls}")
    checked = run([sys.executable, os.path.join(HERE, "check-timeline.py"), path])
    check(checked.returncode == 0, f"two-host timeline check: {checked.stderr}")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    roles = [(h["role"], h["method"]) for h in doc["metadata"]["hosts"]]
    check(roles == [("axis", "axis"),
                     ("unplaced", "unplaced: no chain of frames from the axis host")],
           f"roles {roles}")
    names = [e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"]
    check(sum(name.startswith("[unplaced] ") for name in names) == len(names) // 2,
           f"process names {names}")


def check_discarded(merge, gen_trace, record_trace, work):
    """A fast program with tiny buffers loses events: the merger says how many, and still
    produces its tally and a valid timeline."""
    trace = os.path.join(work, "lossy")
    recorded = run([record_trace, "--tiny-buffers", trace, "--", gen_trace, "bench", "20000"])
    check(recorded.returncode == 0, f"lossy recording: {recorded.stderr}")
    path = os.path.join(work, "lossy.json")
    data = tally(merge, trace, "-l", path)
    anomalies = data["anomalies"]
    check(anomalies["discarded_events"] + anomalies["discarded_packets"] > 0,
           f"no discarded events reported: {anomalies}")
    checked = run([sys.executable, os.path.join(HERE, "check-timeline.py"), path])
    check(checked.returncode == 0, f"lossy timeline check: {checked.stderr}")
    text = run([merge, trace]).stdout
    check("discarded_events=" in text, "the text footer does not show discarded events")


if __name__ == "__main__":
    sys.exit(main())
