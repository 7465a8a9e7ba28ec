#!/usr/bin/env python3
"""The feed job in plain Python, as people write it: fetch BASE/feeds/0.xml ... COUNT-1
with a thread pool, parse each with feedparser, and print every entry as one JSON line
(id as aggregate names it, title, link, published), newest first.
Usage: feeds.py BASE COUNT"""
import calendar, concurrent.futures, json, sys, time, urllib.request

import feedparser

base, count = sys.argv[1], int(sys.argv[2])


def fetch(number):
    with urllib.request.urlopen(f"{base}/feeds/{number}.xml", timeout=30) as response:
        body = response.read()
    parsed = feedparser.parse(body)
    entries = []
    for entry in parsed.entries:
        published = entry.get("published_parsed") or entry.get("updated_parsed")
        entries.append({
            "id": f"f{number}:{entry.get('id') or entry.get('link')}",
            "title": entry.get("title", ""),
            "url": entry.get("link"),
            "published": time.strftime("%Y-%m-%dT%H:%M:%SZ", published) if published else None,
            "_sort": calendar.timegm(published) if published else 0,
        })
    return entries


with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
    cards = [card for entries in pool.map(fetch, range(count)) for card in entries]
cards.sort(key=lambda card: -card["_sort"])
out = sys.stdout
for card in cards:
    del card["_sort"]
    out.write(json.dumps(card, sort_keys=True, ensure_ascii=False) + "\n")
