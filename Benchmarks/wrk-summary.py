#!/usr/bin/env python3
"""Reads wrk's output (run with --latency) and prints one line: requests per second,
p99 latency in ms, requests, errors (socket errors and non-2xx/3xx answers).
Usage: wrk-summary.py FILE"""
import re, sys

text = open(sys.argv[1], encoding="utf-8").read()

def ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]

rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"99%\s+([\d.]+)(us|ms|s|m)\b", text)
requests = int(re.search(r"(\d+) requests in", text).group(1))
errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
errors += int(non2xx.group(1)) if non2xx else 0
print(f"{rps:.0f} {ms(*p99.groups()):.2f} {requests} {errors}")
