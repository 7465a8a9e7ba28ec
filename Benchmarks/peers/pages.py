#!/usr/bin/env python3
"""The html job in Python as the ecosystem writes it: fetch BASE/pages/0.html ... COUNT-1
with a thread pool, find the items and fields with the same CSS selectors as aggregate's
sources, and print every item as one JSON line (id as aggregate names it, title, url,
price, published). PARSER is `lxml` (lxml.html with cssselect: what parsel and Scrapy use)
or `selectolax` (Lexbor, the fastest HTML parser Python has).
PARSER `articles` fetches the page each item of the first COUNT list pages links to
(BASE/pages/article/SKU-n-i.html), four at a time, and reads nothing in them: what
`full_content:`'s fetches alone cost.
Usage: pages.py PARSER BASE COUNT"""
import concurrent.futures, json, re, sys, urllib.parse, urllib.request
from decimal import Decimal

parser, base, count = sys.argv[1], sys.argv[2], int(sys.argv[3])


def price(text):
    amount = re.search(r"[\d.,]+", text).group(0).replace(",", "")
    return {"amount": str(Decimal(amount)), "currency": "GBP"}


def with_lxml(body):
    import lxml.html
    for item in lxml.html.fromstring(body).cssselect("li.product-card"):
        link = item.cssselect("h3.title a")[0]
        yield (item.get("data-sku"), link.text_content().strip(), link.get("href"),
               item.cssselect("span.price")[0].text_content(), item.cssselect("time")[0].get("datetime"))


def with_selectolax(body):
    from selectolax.lexbor import LexborHTMLParser
    for item in LexborHTMLParser(body).css("li.product-card"):
        link = item.css_first("h3.title a")
        yield (item.attributes.get("data-sku"), link.text(strip=True), link.attributes.get("href"),
               item.css_first("span.price").text(), item.css_first("time").attributes.get("datetime"))


if parser == "articles":
    def read(url):
        with urllib.request.urlopen(url, timeout=30) as response:
            return len(response.read())
    urls = [f"{base}/pages/article/SKU-{n}-{i}.html" for n in range(count) for i in range(100)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        print(f"{len(urls)} pages, {sum(pool.map(read, urls))} bytes")
    sys.exit(0)

items = {"lxml": with_lxml, "selectolax": with_selectolax}[parser]


def fetch(number):
    url = f"{base}/pages/{number}.html"
    with urllib.request.urlopen(url, timeout=30) as response:
        body = response.read()
    return [{"id": f"p{number}:{sku}", "title": title, "url": urllib.parse.urljoin(url, href),
             "price": price(shown), "published": published}
            for sku, title, href, shown, published in items(body)]


with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
    out = sys.stdout
    for cards in pool.map(fetch, range(count)):
        for card in cards:
            out.write(json.dumps(card, sort_keys=True, ensure_ascii=False) + "\n")
