#!/usr/bin/env python3
"""The peer of `aggregate refresh` a Python user would pick to fetch feeds into a local
database: lemon24's reader (PyPI), BASE/feeds/0.xml ... COUNT-1 added to DB (a new file is
a cold run) and updated with 8 workers. Prints how many entries DB holds.
Usage: reader_refresh.py BASE COUNT DB"""
import sys

from reader import make_reader

base, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
reader = make_reader(path)
for number in range(count):
    reader.add_feed(f"{base}/feeds/{number}.xml", exist_ok=True)
reader.update_feeds(workers=8)
print(reader.get_entry_counts().total)
reader.close()
