#!/usr/bin/env python3
"""The benchmark job as a plain Python script: every card of the four list sources at
fixture-server argv[1], fetched in threads, merged and sorted by price (none last)."""
import json, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

base = sys.argv[1]

def get(path, headers={}):
    return json.load(urllib.request.urlopen(urllib.request.Request(base + path, headers=headers)))

def target():
    return [{"id": f"target:{p['id']}", "title": p["title"],
             "price": Decimal((p.get("sale_price") or p["regular_price"])["amount_in_cents"]) / 100}
            for p in get("/target/deals")["products"]]

def users():
    cards, page = [], 1
    while True:
        body = get(f"/reqres/api/users?page={page}", {"x-api-key": "reqres-free-v1"})
        cards += [{"id": f"users:{u['id']}", "title": f"{u['first_name']} {u['last_name']}", "price": None} for u in body["data"]]
        if page >= body["total_pages"]:
            return cards
        page += 1

def dishwashers():
    def price(p):
        try: return Decimal(p["price"]["now"])
        except Exception: return None
    return [{"id": f"dishwashers:{p['productId']}", "title": p["title"], "price": price(p)}
            for p in get("/dishwasher/api/search-valid-response.json")["products"]]

def cabify():
    return [{"id": f"cabify:{p['code']}", "title": p["name"], "price": Decimal(str(p["price"]))}
            for p in get("/cabify/Products.json")["products"]]

with ThreadPoolExecutor() as pool:
    cards = [card for result in pool.map(lambda f: f(), [target, users, dishwashers, cabify]) for card in result]
cards.sort(key=lambda c: (c["price"] is None, c["price"] or 0))
out = sys.stdout
for card in cards:
    out.write(json.dumps(card, default=str) + "\n")
