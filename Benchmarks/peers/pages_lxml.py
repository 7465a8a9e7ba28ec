#!/usr/bin/env python3
"""The html job in Python as the ecosystem writes it (what parsel and Scrapy use): fetch
BASE/pages/0.html ... COUNT-1 with a thread pool, parse each with lxml.html, find the items
and fields with cssselect (the same selectors as aggregate's sources), and print every item
as one JSON line (id as aggregate names it, title, url, price, published).
Usage: pages_lxml.py BASE COUNT"""
import concurrent.futures, json, re, sys, urllib.parse, urllib.request
from decimal import Decimal

import lxml.html

base, count = sys.argv[1], int(sys.argv[2])


def price(text):
    amount = re.search(r"[\d.,]+", text).group(0).replace(",", "")
    return {"amount": str(Decimal(amount)), "currency": "GBP"}


def fetch(number):
    url = f"{base}/pages/{number}.html"
    with urllib.request.urlopen(url, timeout=30) as response:
        body = response.read()
    page = lxml.html.fromstring(body)
    cards = []
    for item in page.cssselect("li.product-card"):
        link = item.cssselect("h3.title a")[0]
        cards.append({
            "id": f"p{number}:{item.get('data-sku')}",
            "title": link.text_content().strip(),
            "url": urllib.parse.urljoin(url, link.get("href")),
            "price": price(item.cssselect("span.price")[0].text_content()),
            "published": item.cssselect("time")[0].get("datetime"),
        })
    return cards


with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
    out = sys.stdout
    for cards in pool.map(fetch, range(count)):
        for card in cards:
            out.write(json.dumps(card, sort_keys=True, ensure_ascii=False) + "\n")
