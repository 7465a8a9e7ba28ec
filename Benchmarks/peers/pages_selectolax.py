#!/usr/bin/env python3
"""The html job with selectolax (Lexbor), the fastest HTML parser Python has: as
pages_lxml.py, the same selectors and the same JSON lines.
Usage: pages_selectolax.py BASE COUNT"""
import concurrent.futures, json, re, sys, urllib.parse, urllib.request
from decimal import Decimal

from selectolax.lexbor import LexborHTMLParser

base, count = sys.argv[1], int(sys.argv[2])


def price(text):
    amount = re.search(r"[\d.,]+", text).group(0).replace(",", "")
    return {"amount": str(Decimal(amount)), "currency": "GBP"}


def fetch(number):
    url = f"{base}/pages/{number}.html"
    with urllib.request.urlopen(url, timeout=30) as response:
        body = response.read()
    page = LexborHTMLParser(body)
    cards = []
    for item in page.css("li.product-card"):
        link = item.css_first("h3.title a")
        cards.append({
            "id": f"p{number}:{item.attributes.get('data-sku')}",
            "title": link.text(strip=True),
            "url": urllib.parse.urljoin(url, link.attributes.get("href")),
            "price": price(item.css_first("span.price").text()),
            "published": item.css_first("time").attributes.get("datetime"),
        })
    return cards


with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
    out = sys.stdout
    for cards in pool.map(fetch, range(count)):
        for card in cards:
            out.write(json.dumps(card, sort_keys=True, ensure_ascii=False) + "\n")
