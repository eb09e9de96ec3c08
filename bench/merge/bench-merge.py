#!/usr/bin/env python3
"""bench-merge.py MERGE GEN_TRACE RECORD_TRACE [ITERATIONS]

Records gen-trace's bench scenario (about 7 events per iteration; default 300000 iterations, so
a little over 2 million events) and the same 4x longer, then prints, measured in this one run:
- the merger's throughput as a ratio to `babeltrace2 TRACE -o dummy` on the same trace
  (babeltrace2 time / zeprof-merge time: >= 1 means the merger is at least as fast; target 0.8),
  for the tally and for the tally plus timeline (-l), all with one reader (-J 1); then the tally
  with the trace split across the cores (the default -J), by wall time;
- zeprof-merge's peak RSS on the 1x and the 4x trace (should stay nearly flat), with
  babeltrace2's own for reference (file pages that src.ctf.fs maps count in both);
- the Perfetto timeline (-l FILE.pftrace) against the JSON one (-l FILE.json) on the 1x trace: the
  size ratio (target <= 0.25), the write-speed ratio (JSON write time / Perfetto write time, a
  write time being the CPU time of the run with -l less that of the tally alone; target >= 1.5),
  and the peak RSS of -l FILE.pftrace at 1x and 4x (should stay nearly flat).
Each timing is the best of three runs (CPU time, user + system, of the child)."""
import os
import shutil
import sys
import tempfile

from merge_bench import best, count_events, measure, record


def perfetto_vs_json(merge, one, four, work, rounds=5):
    # `merge` is one reader (-J 1): the split across cores (-J N) would add to both runs what
    # the timeline's spans cost it to carry
    """The Perfetto timeline against the JSON timeline of the same trace (issue 15). A timeline's
    write time is the CPU time of the run with -l less that of the tally alone: a small difference
    of large numbers on a busy machine, so the three runs are interleaved, `rounds` times, and
    the least time of each is kept."""
    paths = {kind: os.path.join(work, "timeline." + kind) for kind in ("json", "pftrace")}
    cpu = {"tally": [], "json": [], "pftrace": []}
    rss, sizes = {}, {}
    for _ in range(rounds):
        cpu["tally"].append(measure(merge + [one])[0])
        for kind, path in paths.items():
            seconds, _, rss[kind] = measure(merge + ["-l", path, one])
            cpu[kind].append(seconds)
            sizes[kind] = os.path.getsize(path)
            os.remove(path)
    tally_cpu = min(cpu["tally"])
    writes = {kind: max(min(cpu[kind]) - tally_cpu, 1e-3) for kind in paths}
    _, _, rss_4x = measure(merge + ["-l", paths["pftrace"], four])
    os.remove(paths["pftrace"])
    print(f"timeline JSON: {sizes['json'] / 1e6:.1f} MB, written in {writes['json']:.2f} s cpu; "
          f"Perfetto: {sizes['pftrace'] / 1e6:.1f} MB, written in {writes['pftrace']:.2f} s cpu "
          f"(tally alone {tally_cpu:.2f} s cpu; least of {rounds} interleaved runs)")
    print(f"size ratio Perfetto / JSON: {sizes['pftrace'] / sizes['json']:.3f} (target <= 0.25)")
    print(f"write-speed ratio Perfetto vs JSON: {writes['json'] / writes['pftrace']:.2f} "
          f"(target >= 1.5)")
    print(f"peak RSS (tally + Perfetto timeline): 1x {rss['pftrace'] / 1024:.1f} MiB, "
          f"4x {rss_4x / 1024:.1f} MiB, ratio {rss_4x / rss['pftrace']:.2f}")


def main():
    merge_path, gen_trace, record_trace = sys.argv[1:4]
    # one reader: the merger's own rate against babeltrace2's (the split across cores is
    # bench-reduce.py's, and the last line here)
    merge = [merge_path, "-J", "1"]
    iterations = int(sys.argv[4]) if len(sys.argv) > 4 else 300000
    work = tempfile.mkdtemp(prefix="zeprof-bench-merge-")
    try:
        one = os.path.join(work, "1x")
        four = os.path.join(work, "4x")
        record(record_trace, gen_trace, one, iterations)
        events = count_events(one)
        print(f"trace 1x: {events} events")
        timeline = os.path.join(work, "timeline.json")
        bt_cpu, bt_wall, bt_rss_1x = best(["babeltrace2", one, "-o", "dummy"])
        tally_cpu, tally_wall, rss_1x = best(merge + [one])
        tl_cpu, tl_wall, rss_tl_1x = best(merge + ["-l", timeline, one])
        split_cpu, split_wall, rss_split = best([merge_path, one])
        print(f"babeltrace2 -o dummy: {bt_cpu:.2f} s cpu, {bt_wall:.2f} s wall, "
              f"{events / bt_cpu / 1e6:.2f} M events/s")
        print(f"zeprof-merge (tally): {tally_cpu:.2f} s cpu, {tally_wall:.2f} s wall, "
              f"{events / tally_cpu / 1e6:.2f} M events/s")
        print(f"zeprof-merge -l (tally + timeline): {tl_cpu:.2f} s cpu, {tl_wall:.2f} s wall")
        print(f"throughput ratio (tally) vs babeltrace2 -o dummy: {bt_cpu / tally_cpu:.2f} "
              f"(target >= 0.8)")
        print(f"throughput ratio (tally + timeline) vs babeltrace2 -o dummy: "
              f"{bt_cpu / tl_cpu:.2f}")
        print(f"zeprof-merge (tally) split across {os.cpu_count()} cores: {split_wall:.2f} s "
              f"wall, {split_cpu:.2f} s cpu, {rss_split / 1024:.1f} MiB; wall-time ratio vs "
              f"babeltrace2 -o dummy: {bt_wall / split_wall:.2f}")
        os.remove(timeline)

        record(record_trace, gen_trace, four, 4 * iterations)
        _, _, bt_rss_4x = measure(["babeltrace2", four, "-o", "dummy"])
        _, _, rss_4x = measure(merge + [four])
        _, _, rss_tl_4x = measure(merge + ["-l", timeline, four])
        print(f"peak RSS of babeltrace2 -o dummy itself, for reference: 1x "
              f"{bt_rss_1x / 1024:.1f} MiB, 4x {bt_rss_4x / 1024:.1f} MiB")
        print(f"peak RSS (tally): 1x {rss_1x / 1024:.1f} MiB, 4x {rss_4x / 1024:.1f} MiB, "
              f"ratio {rss_4x / rss_1x:.2f}")
        print(f"peak RSS (tally + timeline): 1x {rss_tl_1x / 1024:.1f} MiB, "
              f"4x {rss_tl_4x / 1024:.1f} MiB, ratio {rss_tl_4x / rss_tl_1x:.2f}")
        perfetto_vs_json(merge, one, four, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
