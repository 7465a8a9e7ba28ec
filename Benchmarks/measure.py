#!/usr/bin/env python3
"""Runs commands alternately, `runs` times each, and prints a Markdown table: the median
wall time, the peak RSS (the largest process of the command and its children, from
wait4), the lines printed, and the ratio of each median to the first command's.
Usage: measure.py RUNS LABEL=COMMAND [LABEL=COMMAND ...]"""
import os, statistics, subprocess, sys, time

runs = int(sys.argv[1])
commands = [arg.split("=", 1) for arg in sys.argv[2:]]
walls = {label: [] for label, _ in commands}
rss = {label: 0 for label, _ in commands}
lines = {}
for _ in range(runs):
    for label, command in commands:
        start = time.perf_counter()
        process = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        output = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        walls[label].append(time.perf_counter() - start)
        rss[label] = max(rss[label], usage.ru_maxrss)
        lines[label] = output.count(b"\n")
        if status != 0:
            print(f"{label}: exit status {status >> 8}", file=sys.stderr)
first = statistics.median(walls[commands[0][0]])
first_rss = rss[commands[0][0]]
print(f"| command | median | peak RSS | lines | time ÷ first | RSS ÷ first |")
print(f"|---|---:|---:|---:|---:|---:|")
for label, _ in commands:
    median = statistics.median(walls[label])
    print(f"| {label} | {median:.3f} s | {rss[label] / 1024:.1f} MiB | {lines[label]} | "
          f"{median / first:.2f}× | {rss[label] / first_rss:.2f}× |")
