#!/usr/bin/env python3
"""Runs commands alternately, `runs` times each, and prints a Markdown table: the median
wall time, the peak RSS (the largest process of the command and its children, from
wait4), the peak anonymous memory (the command's processes together, read from
/proc/PID/status every 5 ms: the heap, not the program's files mapped in, which the
kernel can drop and read again), the lines printed, and the ratio of each median to the
first command's.
Usage: measure.py RUNS LABEL=COMMAND [LABEL=COMMAND ...]"""
import os, statistics, subprocess, sys, threading, time

runs = int(sys.argv[1])
commands = [arg.split("=", 1) for arg in sys.argv[2:]]
walls = {label: [] for label, _ in commands}
rss = {label: 0 for label, _ in commands}
anon = {label: 0 for label, _ in commands}
lines = {}


def tree(root):
    """The pid `root` and every process below it."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(name))
            except (OSError, IndexError, ValueError):
                pass
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def anonymous_kib(pids):
    """RssAnon of /proc/PID/status: a counter the kernel keeps, read without walking (or
    locking) the process's memory map, so reading it does not slow the process down."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))
        except (OSError, StopIteration):
            pass
    return total


def watch(process, peak, done):
    pids, polls = [process.pid], 0
    while not done.is_set():
        if polls % 20 == 0:
            pids = tree(process.pid)
        polls += 1
        peak[0] = max(peak[0], anonymous_kib(pids))
        done.wait(0.005)


for _ in range(runs):
    for label, command in commands:
        start = time.perf_counter()
        process = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        peak, done = [0], threading.Event()
        watcher = threading.Thread(target=watch, args=(process, peak, done))
        watcher.start()
        output = process.stdout.read()
        done.set()
        watcher.join()
        _, status, usage = os.wait4(process.pid, 0)
        walls[label].append(time.perf_counter() - start)
        rss[label] = max(rss[label], usage.ru_maxrss)
        anon[label] = max(anon[label], peak[0])
        lines[label] = output.count(b"\n")
        if status != 0:
            print(f"{label}: exit status {status >> 8}", file=sys.stderr)
first = statistics.median(walls[commands[0][0]])
first_rss = rss[commands[0][0]]
first_anon = anon[commands[0][0]] or 1
print(f"| command | median | peak RSS | peak anonymous | lines | time ÷ first | RSS ÷ first | anonymous ÷ first |")
print(f"|---|---:|---:|---:|---:|---:|---:|---:|")
for label, _ in commands:
    median = statistics.median(walls[label])
    print(f"| {label} | {median:.3f} s | {rss[label] / 1024:.1f} MiB | {anon[label] / 1024:.1f} MiB | {lines[label]} | "
          f"{median / first:.2f}× | {rss[label] / first_rss:.2f}× | {anon[label] / first_anon:.2f}× |")
