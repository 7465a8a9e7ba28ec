#!/usr/bin/env python3
"""Replaces what stands between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in FILE with
the contents of TABLE.   Usage: write-table.py FILE NAME TABLE"""
import sys

path, name, table = sys.argv[1:4]
text = open(path, encoding="utf-8").read()
begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path} has no {begin} … {end} section")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
body = open(table, encoding="utf-8").read().strip()
open(path, "w", encoding="utf-8").write(f"{head}{begin}\n{body}\n{end}{tail}")
