#!/usr/bin/env python3
"""The peer of `aggregate search` on the million-card store: lemon24's reader (PyPI)
searching the same entries with its FTS5 search (`search_entries`, ranked by relevance).
  reader_search.py build BASE COUNT DB    the feeds BASE/feeds/0.xml ... COUNT-1 fetched
                                          with update_feeds(workers=8), then indexed
                                          (enable_search, update_search); prints entries
  reader_search.py search DB QUERIES      each line of QUERIES searched, the first 20
                                          results read; prints p50 and p99 in ms
Building indexes about 800 entries a second here, so store.sh keeps the database it
built (keyed by the corpus) and builds it again only when the corpus changes."""
import sys
import time

from reader import make_reader

if sys.argv[1] == "build":
    base, count, path = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    reader = make_reader(path)
    for number in range(count):
        reader.add_feed(f"{base}/feeds/{number}.xml", exist_ok=True)
    reader.update_feeds(workers=8)
    reader.enable_search()
    reader.update_search()
    print(reader.get_entry_counts().total)
    reader.close()
else:
    path, queries = sys.argv[2], [line.strip() for line in open(sys.argv[3]) if line.strip()]
    reader = make_reader(path)
    times = []
    for query in queries:
        start = time.perf_counter()
        list(reader.search_entries(query, limit=20))
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(f"{times[len(times) // 2]:.1f} {times[min(len(times) - 1, int(len(times) * 0.99))]:.1f}")
    reader.close()
