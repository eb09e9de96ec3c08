"""What bench-merge.py and bench-reduce.py share: running a command for its CPU time, wall time
and peak memory, and recording gen-trace's bench scenario."""
import os
import subprocess
import time


def measure(command):
    """Runs command; returns (cpu seconds, wall seconds, peak RSS in KiB). wait4 counts the
    process and every descendant it waited for (the supervised child, the -J workers); the peak
    RSS is that of the largest of them."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command[:3])}... failed: {stderr.strip()}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss


def best(command, runs=3):
    """The least CPU and wall time and the largest peak RSS of `runs` runs."""
    results = [measure(command) for _ in range(runs)]
    return min(r[0] for r in results), min(r[1] for r in results), max(r[2] for r in results)


def interleaved_best(commands, rounds):
    """The least CPU and wall time of each command over `rounds` rounds that run every command
    once in turn: on a shared machine a slow spell then hits all of them alike, not one."""
    results = [[] for _ in commands]
    for _ in range(rounds):
        for i, command in enumerate(commands):
            results[i].append(measure(command))
    return [(min(r[0] for r in runs), min(r[1] for r in runs)) for runs in results]


def count_events(trace):
    """Events in the trace, counted by babeltrace2's own text output."""
    process = subprocess.Popen(["babeltrace2", trace], stdout=subprocess.PIPE)
    lines = sum(1 for _ in process.stdout)
    process.wait()
    return lines


def record(record_trace, gen_trace, path, iterations):
    """Records `iterations` of gen-trace's bench scenario (about 7 events each) into path."""
    subprocess.run([record_trace, "--blocking", path, "--", gen_trace, "bench",
                    str(iterations)], check=True, stdout=subprocess.DEVNULL)
