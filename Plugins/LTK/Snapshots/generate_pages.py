#!/usr/bin/env python3
"""Generate consecutive LTK feed pages from the real recorded shapes.

No complete page of the LTK feed was ever recorded; one real object of each kind was
(see real/). This script builds four consecutive pages of
GET https://api-gateway.rewardstyle.com/api/ltk/v2/ltks/?featured=true&limit=20
with the real field names, types and nulls, consistent joins, and a next_url chain:

  page1.json  20 ltks, the first is the real recorded ltk object verbatim
  page2.json  20 ltks
  page3.json  20 ltks
  page4.json  12 ltks, the last page: meta has no next_url

Awkward cases, on purpose: an ltk whose profile is missing from `profiles` (page 1),
`product_ids` entries with no product (page 1 and 3), a caption with only hashtags
(page 2), products with the later `retailer_id`/`retailer_display_name` fields (page 2).

Deterministic: run it again and the files come out byte for byte the same.
Usage: python3 generate_pages.py   (writes next to this script)
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
ENDPOINT = "https://api-gateway.rewardstyle.com/api/ltk/v2/ltks/"
SEED = "0000000000000000000000000000000e"
PAGE_SIZES = [20, 20, 20, 12]
rng = random.Random(20220410)


def real(name):
    with open(os.path.join(HERE, "real", name)) as f:
        return json.load(f)


REAL_LTK = real("fragment_ltk_object.json")
REAL_PRODUCT = real("fragment_product_object.json")
REAL_PROFILE = real("fragment_profile_object.json")


def uuid(n, tail="0242ac110004"):
    return "%08x-%04x-11ec-%04x-%s" % (0xc70ee072 + n * 7919, 0xb8f8 - n, 0xa164 + n, tail)


def token(n, alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"):
    return "".join(rng.choice(alphabet) for _ in range(n))


PROFILES = [REAL_PROFILE] + [
    {
        "id": uuid(900 + i, "f21ee72f220c"),
        "avatar_url": "https://avatar-cdn.liketoknow.it/%s.%s" % (uuid(900 + i, "f21ee72f220c"), uuid(950 + i, "305307b43830")),
        "avatar_upload_url": None,
        "display_name": name,
        "full_name": full,
        "instagram_name": "",
        "blog_name": "",
        "blog_url": "",
        "bg_image_url": "https://avatar-cdn.liketoknow.it/%s.%s" % (uuid(900 + i, "f21ee72f220c"), uuid(970 + i, "98c5bd94a706")),
        "bg_upload_url": None,
        "bio": "",
        "rs_account_id": 445470 + 17 * (i + 1),
        "searchable": True,
    }
    for i, (name, full) in enumerate([
        ("homewithholly", "Holly Marsh"), ("styledbysam", "Sam Okafor"), ("thefitmama", "Dana Reyes"),
        ("casaclara", "Clara Jensen"), ("weekendwardrobe", "Priya Shah"),
    ])
]
# The real ltk names a profile that is not the real profile object; give it one.
PROFILES.append(dict(PROFILES[1], id=REAL_LTK["profile_id"], display_name="modernnest", full_name="Ava Lindqvist",
                     avatar_url="https://avatar-cdn.liketoknow.it/%s.%s" % (REAL_LTK["profile_id"], uuid(990, "305307b43830")),
                     rs_account_id=445999))
MISSING_PROFILE = uuid(999, "f21ee72f220c")

CAPTIONS = [
    "Spring refresh for the living room\nNew throw pillows, a jute rug and the comfiest accent chair\n\n#LTKhome #LTKsalealert",
    "Date night outfit:\nSatin midi skirt, cropped cardigan and block heels\n\n#LTKstyletip #LTKunder50",
    "Kitchen organization that actually works\nClear canisters, labels and a lazy susan for the pantry\n\n#LTKhome #LTKfindsunder50",
    "Airport outfit ✈️\nMatching lounge set, white sneakers, oversized tote\n#LTKtravel",
    "Nursery reveal!\nCrib, glider and the softest blackout curtains\n\n#LTKbaby #LTKbump #LTKhome",
    "Workout gear I wear on repeat\nHigh waisted leggings, sports bra, running shoes\n\n#LTKfit #LTKactive",
    "Patio season ☀️\nOutdoor sofa, string lights, planters\n\n#LTKseasonal #LTKhome",
    "Teacher outfits for the week\nMonday through Friday, all under $40\n\n#LTKworkwear #LTKunder50",
    "Bathroom refresh on a budget\nGold hardware, new towels, a round mirror\n\n#LTKhome #LTKunder100",
    "Cozy fall layers\nShacket, turtleneck, straight leg jeans, loafers\n\n#LTKSeasonal #LTKstyletip",
]
HASHTAG_ONLY = "#LTKhome #LTKfindsunder100"


def product(n, ltk_id, retailer=False):
    pid = uuid(400 + n, "0242ac110004")
    link = "https://rstyle.me/+%s?li=%s&lpm=SIMILAR" % (token(22), ltk_id)
    details = "%d:2" % (206745681 + 131 * (n + 1))
    item = {
        "id": pid,
        "ltk_id": ltk_id,
        "hyperlink": link,
        "image_url": "https://images.rewardstyle.com/img?v=1&width=256&height=256&crop&p=%s" % details.split(":")[0],
        "links": {key: link.replace("?li=", "?__cid=%d&li=" % cid) for key, cid in [
            ("ANDROID_CONSUMER_APP", 1945), ("ANDROID_CONSUMER_APP_SS", 1946), ("IOS_CONSUMER_APP", 1907),
            ("IOS_CONSUMER_APP_SS", 1908), ("LTK_EMAIL", 1141), ("LTK_WEB", 1144), ("LTK_WIDGET", 1843),
            ("TAILORED_EMAIL", 1875)]},
        "matching": "SIMILAR",
        "product_details_id": details,
    }
    if retailer:
        item["retailer_id"] = "%d" % (2000 + n)
        item["retailer_display_name"] = ["Target", "Amazon", "Walmart", "Wayfair", "Nordstrom"][n % 5]
    return item


def timestamp(minutes_before):
    # Newest first, counting back from the real post's publication time.
    total = 18 * 60 + 5 - minutes_before
    day = 10 + total // (24 * 60)
    total %= 24 * 60
    return "2022-04-%02dT%02d:%02d:%02d+00:00" % (day, total // 60, total % 60, 20)


def build():
    ltks, products_by_ltk, counter = [], {}, 0
    total = sum(PAGE_SIZES)
    for n in range(total):
        if n == 0:
            ltk = dict(REAL_LTK)
            first = dict(REAL_PRODUCT)
            # The real ltk lists three product ids; one product object was recorded.
            others = [product(counter, ltk["id"]), product(counter + 1, ltk["id"])]
            others[0]["id"], others[1]["id"] = ltk["product_ids"][1], ltk["product_ids"][2]
            counter += 2
            ltks.append(ltk)
            products_by_ltk[ltk["id"]] = [first] + others
            continue
        ltk_id = uuid(n)
        profile = PROFILES[n % len(PROFILES)]["id"]
        if n == 7:
            profile = MISSING_PROFILE
        count = 1 + (n % 4)
        items = [product(counter + k, ltk_id, retailer=(20 <= n < 40 and k == 0)) for k in range(count)]
        counter += count
        published = timestamp(37 * n)
        ltk = {
            "hero_image": "https://images.liketoknow.it/%s" % ltk_id,
            "hero_image_width": 1080 if n % 3 else 2048,
            "hero_image_height": 1350 if n % 3 else 2048,
            "id": ltk_id,
            "profile_id": profile,
            "profile_user_id": uuid(600 + n, "5f013ef8e3df"),
            "video_media_id": None,
            "status": "PUBLISHED",
            "caption": HASHTAG_ONLY if n == 23 else CAPTIONS[n % len(CAPTIONS)],
            "share_url": "https://liketk.it/3%s" % token(4),
            "date_created": published.replace(":20+", ":17+"),
            "date_updated": published,
            "date_scheduled": None,
            "date_published": published,
            "product_ids": [item["id"] for item in items],
            "hash": token(22),
        }
        # Product ids with no product object: one on page 1, one on page 3.
        if n in (11, 45):
            ltk["product_ids"].append(uuid(800 + n))
        ltks.append(ltk)
        products_by_ltk[ltk_id] = items
    return ltks, products_by_ltk


def write_pages():
    ltks, products_by_ltk = build()
    profiles = {p["id"]: p for p in PROFILES}
    start = 0
    for index, size in enumerate(PAGE_SIZES):
        page_ltks = ltks[start:start + size]
        start += size
        page_profiles = []
        for ltk in page_ltks:
            profile = profiles.get(ltk["profile_id"])
            if profile and profile not in page_profiles:
                page_profiles.append(profile)
        last = page_ltks[-1]["id"]
        meta = {"last_id": last, "num_results": len(page_ltks), "total_results": len(ltks), "limit": 20, "seed": SEED}
        if index + 1 < len(PAGE_SIZES):
            meta["next_url"] = "%s?featured=true&last_id=%s&limit=20&seed=%s" % (ENDPOINT, last, SEED)
        body = {
            "ltks": page_ltks,
            "products": [p for ltk in page_ltks for p in products_by_ltk[ltk["id"]]],
            "profiles": page_profiles,
            "meta": meta,
        }
        text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
        # The real server writes & as \u0026 inside strings.
        text = text.replace("&", "\\u0026")
        with open(os.path.join(HERE, "page%d.json" % (index + 1)), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    write_pages()
