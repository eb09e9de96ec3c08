#!/usr/bin/env python3
"""check-timeline.py FILE: checks a zeprof timeline against docs/interface.md "The timeline".

Valid JSON; ts non-decreasing in file order; no two "X" slices on one lane partially overlapping
(nesting is fine); every flow start has its finish and the reverse; every lane used is named;
counter events ("C", device telemetry) are well formed and on a named process lane;
the metadata has hosts, origin_ns and anomalies. Prints each problem; exit status 1 if any.
"""
import json
import sys


COUNTERS = {"utilization %", "frequency MHz", "power W", "memory MiB"}


def ns(value):
    return round(value * 1000)


def check(path):
    problems = []
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        return ["traceEvents is not a list"]
    if doc.get("displayTimeUnit") != "ns":
        problems.append("displayTimeUnit is not ns")
    meta = doc.get("metadata", {})
    for key in ("hosts", "origin_ns", "anomalies", "remote_windows"):
        if key not in meta:
            problems.append(f"metadata.{key} missing")
    for host in meta.get("hosts", []):
        for key in ("hostname", "role", "offset_ns", "bound_ns", "method"):
            if key not in host:
                problems.append(f"metadata.hosts entry lacks {key}")
    last_ts = None
    open_slices = {}
    flows = {}
    named_processes, named_threads, used, counted = set(), set(), set(), set()
    for index, event in enumerate(events):
        phase = event.get("ph")
        if "ts" in event:
            ts = ns(event["ts"])
            if last_ts is not None and ts < last_ts:
                problems.append(f"event {index} ts {event['ts']} before the previous one")
            last_ts = ts
        if phase == "M":
            if event["name"] == "process_name":
                named_processes.add(event["pid"])
            elif event["name"] == "thread_name":
                named_threads.add((event["pid"], event["tid"]))
            continue
        if phase == "C":
            # Device telemetry: a counter track on a device's process lane (no thread).
            if event.get("cat") != "telemetry" or event.get("name") not in COUNTERS or \
                    not isinstance(event.get("args", {}).get("value"), (int, float)):
                problems.append(f"counter event {index} is malformed: {event}")
            counted.add(event.get("pid"))
            continue
        lane = (event.get("pid"), event.get("tid"))
        used.add(lane)
        if phase == "X":
            start, end = ns(event["ts"]), ns(event["ts"]) + ns(event["dur"])
            if event["dur"] < 0:
                problems.append(f"event {index} has a negative duration")
            args = event.get("args", {})
            if "host" not in args:
                problems.append(f"event {index} lacks args.host")
            if event.get("cat") == "api":
                for key in ("pid", "tid", "result"):
                    if key not in args:
                        problems.append(f"api event {index} lacks args.{key}")
            elif event.get("cat") == "device":
                for key in ("device", "uncertainty_ns"):
                    if key not in args:
                        problems.append(f"device event {index} lacks args.{key}")
            else:
                problems.append(f"event {index} has cat {event.get('cat')}")
            stack = open_slices.setdefault(lane, [])
            while stack and stack[-1] <= start:
                stack.pop()
            if stack and end > stack[-1]:
                problems.append(f"event {index} ({event['name']}) overlaps another slice on "
                                f"lane {lane}")
            stack.append(end)
        elif phase in ("s", "f"):
            flows.setdefault(event["id"], []).append(phase)
        else:
            problems.append(f"event {index} has unexpected phase {phase}")
    for flow, phases in flows.items():
        if sorted(phases) != ["f", "s"]:
            problems.append(f"flow {flow} has phases {phases}")
    for pid, tid in used:
        if pid not in named_processes:
            problems.append(f"process lane {pid} has no process_name")
        if (pid, tid) not in named_threads:
            problems.append(f"thread lane {pid}/{tid} has no thread_name")
    for pid in sorted(counted - named_processes, key=str):
        problems.append(f"counter lane {pid} has no process_name")
    return problems


def main():
    problems = check(sys.argv[1])
    for problem in problems[:50]:
        print(f"{sys.argv[1]}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
