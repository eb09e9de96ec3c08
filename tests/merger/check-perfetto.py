#!/usr/bin/env python3
"""check-perfetto.py MERGE PROTOC PROTO CASES_DIR...: the Perfetto timeline (-l FILE.pftrace) against the
JSON timeline of the same traces, decoded by `PROTOC --decode=perfetto.protos.Trace PROTO`.

For every case of each CASES_DIR (a folder holding `traces/`, one trace directory per host:
tests/merger/golden's single hosts and placed pair, and tests/merger/perfetto-traces' sampled
run, whose device telemetry gives counters), both timelines are written and must say the same: the same lanes (numbers and names), on every lane
the same slices (time, duration, name, category, arguments), the same flows from the same appends
to the same device slices, the same metadata (placement of every host, remote windows,
devices, anomalies, origin) and the same counter values (device telemetry), if any. The Perfetto file must also be well formed for a reader: one packet
sequence whose first packet clears the incremental state, every interned id defined before use,
every begin followed by its end on the same track, and slices that nest on every track once
packets are ordered by time as Perfetto orders them. Then the command line: --timeline-format
overrides the name, -l x.json still writes JSON, a bad format is refused in one line, and a
failed run leaves no file.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, exit_status  # noqa: E402

FIELD = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*)(?:: (.*)| \{)$')


def scalar(text):
    """One value of protoc's text format: a string, an integer, a boolean, a float or an enum."""
    if text.startswith('"'):
        # C escapes of UTF-8 bytes (octal for bytes >= 0x80) back to the string.
        raw = re.sub(rb"\\([0-7]{3}|.)", lambda m: bytes([int(m.group(1), 8)])
                     if len(m.group(1)) == 3 else {b"n": b"\n", b"t": b"\t", b"r": b"\r"}
                     .get(m.group(1), m.group(1)), text[1:-1].encode())
        return raw.decode("utf-8")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text)
    except ValueError:
        return text  # an enum name


def parse_text_format(text):
    """protoc's text format (one field per line) into nested dicts: every field a list of values,
    messages as dicts."""
    root, stack = {}, []
    current = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            current = stack.pop()
            continue
        m = FIELD.match(line)
        if not m:
            raise ValueError(f"cannot parse {line!r}")
        name, value = m.groups()
        if value is None:
            child = {}
            current.setdefault(name, []).append(child)
            stack.append(current)
            current = child
        else:
            current.setdefault(name, []).append(scalar(value))
    return root


def one(message, field, default=None):
    values = message.get(field)
    return values[0] if values else default


def decode(protoc, proto, path):
    with open(path, "rb") as f:
        result = subprocess.run(
            [protoc, f"--proto_path={os.path.dirname(proto)}", "--decode=perfetto.protos.Trace",
             proto], stdin=f, capture_output=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"protoc --decode failed: {result.stderr.decode(errors='replace')}")
    return parse_text_format(result.stdout.decode()).get("packet", [])


def annotation_value(annotation):
    for key in ("int_value", "uint_value", "bool_value", "double_value", "string_value"):
        if key in annotation:
            return annotation[key][0]
    if "dict_entries" in annotation:
        return {one(e, "name"): annotation_value(e) for e in annotation["dict_entries"]}
    if "array_values" in annotation:
        return [annotation_value(e) for e in annotation["array_values"]]
    return []  # an empty array or object: nothing inside


def ns(micros):
    return round(micros * 1000)


def json_view(path):
    """The JSON timeline as lanes {number: name}, slices {lane: sorted list}, flows, metadata."""
    with open(path) as f:
        doc = json.load(f)
    lanes, slices, starts, ends, sort = {}, {}, {}, {}, {}
    counters = sorted((ns(e["ts"]), e["pid"], e["name"], round(e["args"]["value"], 3))
                      for e in doc["traceEvents"] if e["ph"] == "C")
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_sort_index":
            sort[e["tid"]] = e["args"]["sort_index"]
        elif e["ph"] == "M":
            number = e["pid"] if e["name"] == "process_name" else e["tid"]
            lanes[number] = e["args"]["name"]
        elif e["ph"] == "X":
            # The Perfetto file leaves out a result or an execution number of 0.
            args = {k: v for k, v in e["args"].items()
                    if k in ("result", "synthetic", "uncertainty_ns", "call_id", "execution",
                             "placement_bound_ns")
                    and not (k in ("result", "execution") and v == 0)}
            slices.setdefault(e["tid"], []).append(
                (ns(e["ts"]), ns(e["dur"]), e["name"], e["cat"], tuple(sorted(args.items()))))
        elif e["ph"] == "s":
            starts[e["id"]] = (ns(e["ts"]), e["tid"])
        elif e["ph"] == "f":
            ends[e["id"]] = (ns(e["ts"]), e["tid"])
    return (lanes, {k: sorted(v) for k, v in slices.items()}, starts, ends, doc["metadata"],
            counters, sort)


def perfetto_view(packets, case):
    """The same view of the decoded Perfetto packets, checking the file's own rules on the way."""
    first = packets[0]
    check(one(first, "sequence_flags") == 1 and one(first, "first_packet_on_sequence") is True,
          f"{case}: the first packet clears the incremental state")
    check(all(one(p, "trusted_packet_sequence_id") == 1 for p in packets),
          f"{case}: every packet is on sequence 1")
    names, categories, arguments = {}, {}, {}
    lanes, slices, starts, ends, metadata, parents = {}, {}, {}, {}, None, {}
    undefined, unpaired, pending = [], [], None
    counter_tracks, counters = {}, []
    timed = []  # (ts, file order, track, type) for the nesting check
    for index, p in enumerate(packets):
        interned = one(p, "interned_data", {})
        for table, field in ((names, "event_names"), (categories, "event_categories"),
                             (arguments, "debug_annotation_names")):
            for entry in interned.get(field, []):
                table[one(entry, "iid")] = one(entry, "name")
        track = one(p, "track_descriptor")
        if track:
            process, thread = one(track, "process"), one(track, "thread")
            if "counter" in track:
                counter_tracks[one(track, "uuid")] = (one(track, "parent_uuid"), one(track, "name"))
            elif process:
                lanes[one(process, "pid")] = one(process, "process_name")
            elif thread:
                lanes[one(thread, "tid")] = one(thread, "thread_name")
            else:
                lanes[one(track, "uuid")] = one(track, "name")
                parents[one(track, "uuid")] = one(track, "parent_uuid")
        event = one(p, "track_event")
        if not event:
            continue
        ts, kind, uuid = one(p, "timestamp"), one(event, "type"), one(event, "track_uuid")
        if pending and (kind != "TYPE_SLICE_END" or uuid != pending[0]):
            unpaired.append(index)
        if kind == "TYPE_SLICE_BEGIN":
            for iid, table in [(one(event, "name_iid"), names)] + \
                    [(c, categories) for c in event.get("category_iids", [])] + \
                    [(one(a, "name_iid"), arguments) for a in event.get("debug_annotations", [])]:
                if iid not in table:
                    undefined.append((index, iid))
            args = tuple(sorted((arguments.get(one(a, "name_iid")), annotation_value(a))
                                for a in event.get("debug_annotations", [])))
            pending = (uuid, ts, names.get(one(event, "name_iid")),
                       categories.get(one(event, "category_iids")), args)
            for flow in event.get("terminating_flow_ids", []):
                ends[flow] = (ts, uuid)
            timed.append((ts, index, uuid, 1))
        elif kind == "TYPE_SLICE_END":
            if pending and pending[0] == uuid:
                uuid_, start, name, category, args = pending
                slices.setdefault(uuid, []).append((start, ts - start, name, category, args))
                pending = None
            timed.append((ts, index, uuid, -1))
        elif kind == "TYPE_COUNTER":
            parent, name = counter_tracks.get(uuid, (None, None))
            counters.append((ts, parent, name, round(one(event, "double_counter_value"), 3)))
        elif kind == "TYPE_INSTANT" and uuid == 1 << 40:
            metadata = {one(a, "name"): annotation_value(a) for a in event["debug_annotations"]}
        elif kind == "TYPE_INSTANT":
            check(names.get(one(event, "name_iid")) == "append"
                  and categories.get(one(event, "category_iids")) == "append",
                  f"{case}: an instant off the metadata track is an append")
            for flow in event.get("flow_ids", []):
                starts[flow] = (ts, uuid)
    check(not undefined, f"{case}: every interned id is defined before its use", str(undefined[:3]))
    check(not unpaired and pending is None, f"{case}: every slice begin is followed by its end",
          str(unpaired[:3]))
    # Perfetto orders packets by time, keeping the file's order for equal times; an end closes
    # the innermost open slice of its track, which must be the one whose end it is.
    stacks, broken = {}, []
    ends_by_begin = {}
    order = sorted(timed)
    for ts, index, uuid, step in timed:
        if step == 1:
            ends_by_begin[index] = None
    by_index = {index: ts for ts, index, uuid, step in timed}
    for ts, index, uuid, step in order:
        stack = stacks.setdefault(uuid, [])
        if step == 1:
            stack.append(by_index[index + 1])  # the end packet follows its begin
        elif not stack or stack.pop() != ts:
            broken.append((uuid, ts))
    check(not broken, f"{case}: slices nest on every track in Perfetto's order", str(broken[:3]))
    return (lanes, {k: sorted(v) for k, v in slices.items()}, starts, ends, metadata,
            sorted(counters), parents)


def run(argv):
    return subprocess.run(argv, capture_output=True, timeout=120)


ENGINE = re.compile(r"(?:(?:compute|copy) )?engine \d+\.\d+")


def check_engines(case, lanes, sort, p_lanes, parents):
    """Engine tracks (Perfetto only: device → engine → queue) hold exactly the queues whose name
    carries the engine; in JSON the queue lanes of one engine share a sort index, and lanes of
    different engines do not. Removes the engine tracks from p_lanes, JSON having none."""
    engines = {uuid: name for uuid, name in p_lanes.items() if ENGINE.fullmatch(name)}
    for uuid in engines:
        del p_lanes[uuid]
    devices = {uuid for uuid, parent in parents.items() if parent is None and uuid in p_lanes}
    queues = {uuid: name for uuid, name in p_lanes.items() if "queue 0x" in name}
    wrong = []
    for uuid, name in queues.items():
        prefix, parent = name.split(": ")[0], parents.get(uuid)
        if ENGINE.fullmatch(prefix) and engines.get(parent) != prefix:
            wrong.append((name, "not under its engine"))
        elif not ENGINE.fullmatch(prefix) and parent not in devices:
            wrong.append((name, "not under its device"))
    wrong += [name for uuid, name in engines.items() if parents.get(uuid) not in devices]
    check(not wrong, f"{case}: {len(engines)} engine tracks under their devices, each queue "
          "under the engine its name says (or under its device)", str(wrong[:3]))
    by_engine = {}
    for number, name in lanes.items():
        if ENGINE.fullmatch(name.split(": ")[0]):
            by_engine.setdefault(name.split(": ")[0], set()).add(sort.get(number))
    ranks = [ranks for ranks in by_engine.values()]
    check(all(len(r) == 1 and None not in r for r in ranks)
          and len(set().union(*ranks) if ranks else set()) == len(ranks),
          f"{case}: the JSON queue lanes of each of {len(ranks)} engines sort together",
          str(by_engine))


def compare_case(merge, protoc, proto, case, traces, scratch):
    json_path = os.path.join(scratch, case + ".json")
    pf_path = os.path.join(scratch, case + ".pftrace")
    for path in (json_path, pf_path):
        result = run([merge, "-l", path] + traces)
        if not check(result.returncode == 0, f"{case}: zeprof-merge -l {os.path.basename(path)}",
                     result.stderr.decode(errors="replace")):
            return
    lanes, slices, starts, ends, metadata, counters, sort = json_view(json_path)
    p_lanes, p_slices, p_starts, p_ends, p_metadata, p_counters, parents = perfetto_view(
        decode(protoc, proto, pf_path), case)
    check_engines(case, lanes, sort, p_lanes, parents)
    check(p_counters == counters,
          f"{case}: the same {len(counters)} counter values (telemetry), on the same devices")
    check(p_lanes.pop(1 << 40, None) == "zeprof", f"{case}: the metadata's own track, \"zeprof\"")
    check(p_lanes == lanes, f"{case}: the same {len(lanes)} lanes, numbered and named alike",
          f"json {lanes}\nperfetto {p_lanes}")
    count = sum(len(v) for v in slices.values())
    check(count > 0 and p_slices == slices,
          f"{case}: the same {count} slices on every lane (time, duration, name, category, args)",
          next((f"lane {k}: json {slices.get(k, [])[:2]} perfetto {p_slices.get(k, [])[:2]}"
                for k in set(slices) | set(p_slices) if slices.get(k) != p_slices.get(k)), ""))
    check(len(starts) > 0 and p_starts == starts and p_ends == ends,
          f"{case}: the same {len(starts)} flows, from the same appends to the same device slices")
    check(p_metadata == metadata,
          f"{case}: the same metadata ({', '.join(sorted(metadata))})",
          f"json {json.dumps(metadata)[:300]}\nperfetto {json.dumps(p_metadata)[:300]}")
    if case == "pair":
        roles = sorted(h["role"] for h in p_metadata["hosts"])
        bounds = [a for v in p_slices.values() for s in v for a in s[4]
                  if a[0] == "placement_bound_ns"]
        check(roles == ["axis", "placed"] and bounds,
              f"{case}: the placement (roles {roles}) and {len(bounds)} bounds of the placed host")
    size_json, size_pf = os.path.getsize(json_path), os.path.getsize(pf_path)
    print(f"    {case}: {size_pf} bytes of Perfetto trace for {size_json} of JSON "
          f"({size_pf / size_json:.2f})")


def check_command_line(merge, traces, scratch):
    # --timeline-format overrides the name, both ways.
    forced = os.path.join(scratch, "forced.json")
    result = run([merge, "--timeline-format", "perfetto", "-l", forced] + traces)
    with open(forced, "rb") as f:
        head = f.read(1)
    check(result.returncode == 0 and head == b"\x0a",
          "--timeline-format perfetto writes a Perfetto trace whatever the name")
    forced = os.path.join(scratch, "forced.pftrace")
    result = run([merge, "--timeline-format", "json", "-l", forced] + traces)
    with open(forced) as f:
        check(result.returncode == 0 and "traceEvents" in json.load(f),
              "--timeline-format json writes JSON whatever the name")
    plain = os.path.join(scratch, "plain.json")
    result = run([merge, "-l", plain] + traces)
    with open(plain) as f:
        check(result.returncode == 0 and "traceEvents" in json.load(f), "-l x.json writes JSON")
    # A bad format: one line, exit 2, nothing written.
    bad = os.path.join(scratch, "bad.pftrace")
    result = run([merge, "--timeline-format", "protobuf", "-l", bad] + traces)
    lines = result.stderr.decode().splitlines()
    check(result.returncode == 2 and len(lines) == 1 and lines[0].startswith(
        "Failed to parse options: option=--timeline-format, value=protobuf")
        and not os.path.exists(bad), "a bad --timeline-format is refused in one line",
        result.stderr.decode())
    result = run([merge, "--timeline-format", "json"] + traces)
    check(result.returncode == 2 and len(result.stderr.decode().splitlines()) == 1,
          "--timeline-format without -l is refused in one line")
    # A failed run leaves no file, named or temporary.
    failed = os.path.join(scratch, "failed", "x.pftrace")
    os.makedirs(os.path.dirname(failed))
    result = run([merge, "-l", failed, traces[0], os.path.join(scratch, "missing")])
    check(result.returncode == 2 and os.listdir(os.path.dirname(failed)) == [],
          "a failed run leaves no Perfetto file and no temporary file")


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    merge, protoc, proto = sys.argv[1:4]
    cases = []
    for directory in sys.argv[4:]:
        cases += [(c, os.path.join(directory, c, "traces")) for c in sorted(os.listdir(directory))
                  if os.path.isdir(os.path.join(directory, c, "traces"))]
    with tempfile.TemporaryDirectory(prefix="zeprof-perfetto-") as scratch:
        for case, traces_dir in cases:
            traces = [os.path.join(traces_dir, t) for t in sorted(os.listdir(traces_dir))]
            try:
                compare_case(merge, protoc, proto, case, traces, scratch)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
                check(False, f"{case}: decoded", str(error))
        first = cases[0][1]
        check_command_line(merge, [os.path.join(first, t) for t in sorted(os.listdir(first))],
                           scratch)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
