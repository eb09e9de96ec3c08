#!/usr/bin/env python3
"""bench-reduce.py MERGE GEN_TRACE RECORD_TRACE [--hosts N] [--events N] [--parallel-hosts N]

Job-scale analysis through partials (zeprof-merge --reduce, docs/merger.md "Partials"). Records
one host trace of gen-trace's bench scenario (--events, default 200000) and prints, measured in
this one run:
- the job-wide tally of --hosts hosts (default 64; the same trace given once per host) from their
  partials against from their raw traces: the ratio of the times (goal >= 20), and the peak RSS
  of the tally from partials for 1/8 of the hosts and for all (should stay flat);
- --parallel-hosts hosts (default 8) analysed with -J 2 against -J 1: the ratio of wall times
  (goal >= 1.7 on 2 cores);
- the reduction's throughput (--reduce of the host trace) as a ratio to
  `babeltrace2 TRACE -o dummy` on the same trace (goal >= 0.9): by CPU time with one reader
  (-J 1), and by wall time with the trace's packets decoded by one worker per core (the default
  -J: docs/merger.md "A host split across cores"), with the CPU time that costs.
Timings are the least of interleaved runs (nine rounds for the reduction's ratios, three for -J;
three runs for the job-wide tally): CPU time (user + system of the child and its workers) for the
single-process ratios, wall time for -J and the split. The per-host reductions are not in the job-wide figure:
they run on each node, where the trace was recorded, in parallel."""
import argparse
import os
import shutil
import sys
import tempfile

from merge_bench import best, count_events, interleaved_best, record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("merge")
    parser.add_argument("gen_trace")
    parser.add_argument("record_trace")
    parser.add_argument("--hosts", type=int, default=64)
    parser.add_argument("--events", type=int, default=200000)
    parser.add_argument("--parallel-hosts", type=int, default=8)
    args = parser.parse_args()
    merge = args.merge
    work = tempfile.mkdtemp(prefix="zeprof-bench-reduce-")
    try:
        trace = os.path.join(work, "host")
        iterations = max(1, args.events // 7)  # the bench scenario: about 7 events per iteration
        record(args.record_trace, args.gen_trace, trace, iterations)
        events = count_events(trace)
        partial = os.path.join(work, "host.partial")
        print(f"host trace: {events} events")

        # 3. the reduction against babeltrace2's own decoding of the same trace: one reader
        # (-J 1) by CPU time, and the trace's packets split across the cores (the default -J,
        # merger/split.h) by wall time, which is what the node waits for
        cores = os.cpu_count()
        (bt_cpu, bt_wall), (reduce_cpu, _), (split_cpu, split_wall) = interleaved_best(
            [["babeltrace2", trace, "-o", "dummy"],
             [merge, "-J", "1", "--reduce", trace, "-o", partial],
             [merge, "--reduce", trace, "-o", partial]],
            rounds=9)
        size = os.path.getsize(partial)
        print(f"babeltrace2 -o dummy: {bt_cpu:.2f} s cpu; zeprof-merge -J 1 --reduce: "
              f"{reduce_cpu:.2f} s cpu, {events / reduce_cpu / 1e6:.2f} M events/s; partial "
              f"{size / 1024:.0f} KiB ({size / events:.1f} bytes per event)")
        print(f"reduction throughput ratio vs babeltrace2 -o dummy, one reader, CPU time: "
              f"{bt_cpu / reduce_cpu:.2f} (goal >= 0.9)")
        print(f"split across {cores} cores (-J {cores}): {split_wall:.2f} s wall "
              f"({split_cpu:.2f} s cpu, {split_cpu / reduce_cpu:.2f}x one reader's), "
              f"babeltrace2 {bt_wall:.2f} s wall; load {os.getloadavg()[0]:.1f}")
        print(f"reduction throughput ratio vs babeltrace2 -o dummy, split, wall time: "
              f"{bt_wall / split_wall:.2f} (goal >= 0.9)")

        # 1. the job-wide tally from partials against from the raw traces
        hosts = args.hosts
        raw_cpu, _, raw_rss = best([merge] + [trace] * hosts, runs=1)
        part_cpu, _, part_rss = best([merge] + [partial] * hosts)
        few = max(1, hosts // 8)
        _, _, few_rss = best([merge] + [partial] * few)
        print(f"tally of {hosts} hosts: from raw traces {raw_cpu:.2f} s cpu "
              f"({raw_rss / 1024:.1f} MiB), from partials {part_cpu:.3f} s cpu "
              f"({part_rss / 1024:.1f} MiB)")
        print(f"job-wide tally speed-up, partials vs raw traces: {raw_cpu / part_cpu:.1f} "
              f"(goal >= 20)")
        print(f"peak RSS of the tally from partials: {few} hosts {few_rss / 1024:.1f} MiB, "
              f"{hosts} hosts {part_rss / 1024:.1f} MiB, ratio {part_rss / few_rss:.2f} "
              f"(flat: near 1)")

        # 2. several hosts reduced at once on this machine
        some = [trace] * args.parallel_hosts
        (one_cpu, one_wall), (two_cpu, two_wall) = interleaved_best(
            [[merge, "-J", "1"] + some, [merge, "-J", "2"] + some], rounds=3)
        # the wall times need two idle cores: the load says whether the machine had them
        print(f"{args.parallel_hosts} hosts: -J 1 {one_wall:.2f} s wall ({one_cpu:.2f} s cpu), "
              f"-J 2 {two_wall:.2f} s wall ({two_cpu:.2f} s cpu); {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f}")
        print(f"speed-up of -J 2 over -J 1: {one_wall / two_wall:.2f} (goal >= 1.7)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
