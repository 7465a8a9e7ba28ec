#!/usr/bin/env bash
# The card store at a million cards (issues 41 and 42; docs/performance.md, "The card store
# at a million cards"). Builds the store the way a user's grows — 500 made-up feeds of 2,000
# entries on the fixture server, written with 20,000 made-up words drawn by Zipf's law, and
# recorded by `aggregate refresh` — then measures on it:
#   - its size on disk per card;
#   - `aggregate --stored --page 1` (feed order, and by price): p50 and p99 of 200 runs;
#   - `serve`'s reader, uncached: 100 distinct pages of every card, p50 and p99; the Unread
#     view's first page; 100 two-word searches; marking 10,000 cards read in one request;
#   - the same searches by lemon24's reader (PyPI) over the same entries, as the peer;
#   - 32 readers (wrk) loading reader and feed pages while a purge removes 100,000 gone
#     cards, beside the same load without a purge;
#   - the Google Reader API with a user's token: unread-count, 100-item pages of the
#     reading list, 1,000 items starred at once, and a ClientLogin.
#   bash Benchmarks/store.sh     (wrk from Debian's packages when missing; about 15 minutes,
#                                 and about 30 more the first time, to build the peer's
#                                 database, which is kept in ~/.cache/aggregate-benchmarks)
# Prints its table, and writes it into docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BENCH_BIN:-.build/release}
if [ -z "${BENCH_BIN:-}" ]; then
    swift build -c release --static-swift-stdlib --product aggregate >&2
    swift build -c release --static-swift-stdlib --product fixture-server >&2
fi
if ! command -v wrk > /dev/null; then
    apt-get update -q > /dev/null && apt-get install -y -q wrk > /dev/null
fi
feeds=${BENCH_FEEDS:-500}
entries=${BENCH_ENTRIES:-2000}
words=${BENCH_WORDS:-20000}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
table="$work/table.md"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
upstream_port=$(free_port)

# The fixture server's feeds with N entries each, on the same port every time.
start_feeds() {
    "$bin/fixture-server" --port "$upstream_port" --feeds "$feeds" --feed-entries "$1" --feed-words "$words" > "$work/feeds.log" &
    feeds_pid=$!
    pids+=("$feeds_pid")
    until grep -q listening "$work/feeds.log" 2>/dev/null; do sleep 0.1; done
}
stop_feeds() { kill "$feeds_pid"; wait "$feeds_pid" 2>/dev/null || true; }

# Sources.yml of every feed; $1 is the top-level keep: line (or nothing).
write_sources() {
    {
        echo "$1"
        echo "sources:"
        for ((n = 0; n < feeds; n++)); do
            echo "  - {id: f$n, plugin: feed, url: http://127.0.0.1:$upstream_port/feeds/$n.xml, fallback: none, max_items: 100000, refresh: 86400}"
        done
    }
}
write_sources "" > "$work/Sources.yml"
write_sources "keep: {gone_for: 1s}" > "$work/Purge.yml"
run() { "$bin/aggregate" --config "$work/Sources.yml" --state "$work/state" "$@"; }

# Records every feed, 50 at a time (one run holds the cards of the sources it records).
refresh_all() {
    for ((first = 0; first < feeds; first += 50)); do
        args=()
        for ((n = first; n < first + 50 && n < feeds; n++)); do args+=(--source "f$n"); done
        run refresh --refresh "${args[@]}"
    done
}

start_feeds "$entries"
start=$(date +%s.%N)
refresh_all
built=$(python3 -c "print(f'{$(date +%s.%N) - $start:.0f}')")
# A refresh leaves the search rows to the first search (docs/search.md): one search writes
# them all, before anything is timed.
start=$(date +%s.%N)
run search indexed > /dev/null
indexed=$(python3 -c "print(f'{$(date +%s.%N) - $start:.0f}')")

# The peer: lemon24's reader holding the same entries, fetched from the same feeds and
# indexed for search. Building it takes about half an hour (its indexing reads some 800
# entries a second), so it is kept, by corpus and version, and built again only when
# either changes.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/aggregate-benchmarks
mkdir -p "$cache"
if [ ! -x "$cache/venv/bin/python" ]; then
    python3 -m venv "$cache/venv" && "$cache/venv/bin/pip" install --quiet reader sgmllib3k
fi
reader_version=$("$cache/venv/bin/python" -c 'import reader; print(reader.__version__)')
reader_db="$cache/reader-$feeds-$entries-$words-$reader_version.sqlite"
if [ ! -f "$reader_db" ]; then
    echo "building the peer's database (once; about 30 minutes)" >&2
    "$cache/venv/bin/python" Benchmarks/peers/reader_search.py build "http://127.0.0.1:$upstream_port" "$feeds" "$reader_db.tmp" > /dev/null
    for suffix in "" -wal -shm .search .search-wal .search-shm; do
        [ -f "$reader_db.tmp$suffix" ] && mv "$reader_db.tmp$suffix" "$reader_db$suffix"
    done
fi
stop_feeds

# 100 two-word searches: words of ranks 10 to 300 and 10 to 3,000, spelled as the fixture
# server spells its made-up words (FeedFarm.word), drawn the same way every run.
python3 - "$work/queries.txt" <<'PY'
import math, random, sys
consonants, vowels = "bdfgklmnprstvz", "aeiou"
def syllable(n): return consonants[n % 70 // 5] + vowels[n % 5]
def word(rank): return syllable(rank % 70) + syllable(rank // 70 % 70) + (syllable(rank // 4900) if rank >= 4900 else "")
draw = random.Random(42)
with open(sys.argv[1], "w") as out:
    for _ in range(100):
        first = int(math.exp(draw.uniform(math.log(10), math.log(300))))
        second = int(math.exp(draw.uniform(math.log(10), math.log(3000))))
        if second == first: second += 1
        out.write(f"{word(first)} {word(second)}\n")
PY
cards=$(run store | awk 'NR > 1 && $1 != "total" { n += $2 } END { print n }')
bytes=$(stat -c %s "$work/state/cards.sqlite")
per_card=$((bytes / cards))

# p50 and p99 of RUNS runs of a command, in ms.
timed() {
    python3 - "$@" <<'PY'
import subprocess, sys, time
runs, command = int(sys.argv[1]), sys.argv[2:]
times = []
for _ in range(runs):
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    times.append((time.perf_counter() - start) * 1000)
times.sort()
print(f"{times[len(times) // 2]:.1f} {times[min(len(times) - 1, int(len(times) * 0.99))]:.1f}")
PY
}
# Once the gigabytes the build and the index wrote are on disk: the kernel's writeback of
# them ran beside the first timed runs. 200 runs each, so that p99 is not simply the
# slowest of a few (of 50 runs it is the maximum).
sync
stored=$(timed 200 "$bin/aggregate" --config "$work/Sources.yml" --state "$work/state" --stored --page 1)
by_price=$(timed 200 "$bin/aggregate" --config "$work/Sources.yml" --state "$work/state" --stored --page 1 --sort price)
version=$(timed 200 "$bin/aggregate" --version)

# Readers are timed once serve's first refresh of every source is over (the upstreams are
# down here, each refresh fails at once): that wave at start-up took the cores from the
# first requests, and it is not what a reader of a running serve meets.
until_refreshed_once() {
    for ((try = 0; try < 300; try++)); do
        curl -sf "$1/healthz" | python3 -c 'import json, sys; s = json.load(sys.stdin).get("sources") or {}; sys.exit(0 if s and all("checked" in v for v in s.values()) else 1)' && return
        sleep 0.2
    done
    echo "serve's first refreshes were not over after 60 s; timing anyway" >&2
}

# serve on the store, its upstreams down (each refresh fails at once and backs off):
# readers are answered from what the store holds.
serve_port=$(free_port)
"$bin/aggregate" serve --config "$work/Sources.yml" --state "$work/state" --port "$serve_port" --no-access-log > "$work/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
until grep -q "serving" "$work/serve.log" 2>/dev/null; do sleep 0.1; done
base="http://127.0.0.1:$serve_port"
until_refreshed_once "$base"
curl -sf -o /dev/null "$base/feed.atom?per_page=50"
reader=$(python3 - "$base" <<'PY'
import sys, time, urllib.request
base, times = sys.argv[1], []
for page in range(2, 102):
    start = time.perf_counter()
    urllib.request.urlopen(f"{base}/?view=all&page={page}&sort=price", timeout=30).read()
    times.append((time.perf_counter() - start) * 1000)
times.sort()
print(f"{times[len(times) // 2]:.1f} {times[98]:.1f}")
PY
)
# The reading views (issue 42): Unread's first page, searches, 10,000 cards marked read
# in one request (the ids of ten sources, a request each, every one unread before).
ids_of() { run --stored --all --format jsonl --source "$1" | python3 -c 'import json, sys; print("\n".join(json.loads(l)["id"] for l in sys.stdin))'; }
for ((n = 0; n < 50; n++)); do ids_of "f$n"; done > "$work/ids.txt"
reading=$(python3 - "$base" "$work/queries.txt" "$work/ids.txt" <<'PY'
import http.cookiejar, json, re, sys, time, urllib.parse, urllib.request
base, queries, ids = sys.argv[1], [l.strip() for l in open(sys.argv[2])], [l.strip() for l in open(sys.argv[3]) if l.strip()]
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
def timed(request, runs, before=None):
    times = []
    for index in range(runs):
        if before: before(index)
        start = time.perf_counter()
        body = opener.open(request(index), timeout=60).read()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    # p99 by nearest rank (the 99th of 100), as the reader's rows above; it was the largest.
    return f"{times[len(times) // 2]:.1f}/{times[max(0, -(-len(times) * 99 // 100) - 1)]:.1f}", body
html = {"Accept": "text/html"}
page = opener.open(urllib.request.Request(base + "/", headers=html), timeout=60).read()
token = re.search(rb'name="token" value="([^"]+)"', page).group(1).decode()
# A person's page is kept while their marks stand (PersonalPages): before each request,
# untimed, one card is marked read or unread again, so that each is rendered anew.
def toggle(index):
    form = urllib.parse.urlencode({"token": token}).encode()
    mark = "read" if index % 2 == 0 else "unread"
    opener.open(urllib.request.Request(f"{base}/cards/{urllib.parse.quote(ids[0])}/{mark}", data=form, headers={"Accept": "application/json"}), timeout=60).read()
unread, _ = timed(lambda _: urllib.request.Request(base + "/", headers=html), 100, before=toggle)
kept, _ = timed(lambda _: urllib.request.Request(base + "/", headers=html), 100)
found = []
def search(index):
    return urllib.request.Request(base + "/search?" + urllib.parse.urlencode({"q": queries[index], "per_page": 20}))
searches, _ = timed(search, len(queries))
counts = [sum(1 for _ in opener.open(search(i), timeout=60)) for i in range(len(queries))]
def mark(index):
    chunk = ids[index * 10000:(index + 1) * 10000]
    form = urllib.parse.urlencode([("token", token)] + [("ids", i) for i in chunk]).encode()
    return urllib.request.Request(base + "/read", data=form, headers={"Accept": "application/json"})
marks, answer = timed(mark, len(ids) // 10000)
print(unread, kept, searches, marks, json.loads(answer)["marked"], sum(1 for c in counts if c == 20), len(counts), len(ids) // 10000)
PY
)
read -r unread_page kept_page searches marks marked full_pages query_count mark_requests <<< "$reading"
peer_search=$("$cache/venv/bin/python" Benchmarks/peers/reader_search.py search "$reader_db" "$work/queries.txt")
search_cli=$(python3 - "$bin/aggregate" "$work" "$work/queries.txt" <<'PY'
import subprocess, sys, time
binary, work, queries = sys.argv[1], sys.argv[2], [l.strip() for l in open(sys.argv[3])][:50]
times = []
for query in queries:
    start = time.perf_counter()
    subprocess.run([binary, "--config", f"{work}/Sources.yml", "--state", f"{work}/state", "search", query], stdout=subprocess.DEVNULL, check=True)
    times.append((time.perf_counter() - start) * 1000)
times.sort()
print(f"{times[len(times) // 2]:.1f}/{times[min(len(times) - 1, int(len(times) * 0.99))]:.1f}")
PY
)
cat > "$work/pages.lua" <<'LUA'
-- Reader and feed pages 1 to 20: Unread newest first, every card by price, and the
-- feed: the purge retires them all.
request = function()
    local page = math.random(1, 20)
    local paths = {"/?page=" .. page, "/?view=all&sort=price&page=" .. page, "/feed.atom?per_page=50&page=" .. page}
    return wrk.format("GET", paths[math.random(1, 3)])
end
LUA
load() { wrk --latency -t2 -c32 -d"$1" -s "$work/pages.lua" "$base/" > "$work/wrk.out" 2>&1; python3 Benchmarks/wrk-summary.py "$work/wrk.out"; }
# Warm first, as the purge row below: the first renderings of the 60 pages are the rows
# above, each timed uncached; this one is the load.
load 5s > /dev/null
quiet=$(load 10s)
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true

# The Google Reader API (issue 43) as an app calls it, signed in with a token, on a serve
# with a user: unread-count, the reading list 100 items a page, 1,000 items starred a
# request (by their short ids), and a ClientLogin (bcrypt's deliberate cost).
printf '%s\n' "benchmark password" | run user add bench --password-stdin 2>/dev/null
token=$(run user token bench 2>/dev/null)
"$bin/aggregate" serve --config "$work/Sources.yml" --state "$work/state" --port "$serve_port" --no-access-log > "$work/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
until grep -q "serving" "$work/serve.log" 2>/dev/null; do sleep 0.1; done
until_refreshed_once "$base"
api=$(python3 - "$base" "$token" "$work/ids.txt" <<'PY'
import hashlib, sys, time, urllib.parse, urllib.request
base, token, ids = sys.argv[1] + "/api/greader", sys.argv[2], [l.strip() for l in open(sys.argv[3]) if l.strip()]
auth = {"Authorization": f"GoogleLogin auth={token}"}
def timed(request, runs):
    times = []
    for index in range(runs):
        start = time.perf_counter()
        body = urllib.request.urlopen(request(index), timeout=60).read()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    # p99 by nearest rank (the 99th of 100), as the reader's rows above; it was the largest.
    return f"{times[len(times) // 2]:.1f}/{times[max(0, -(-len(times) * 99 // 100) - 1)]:.1f}", body
# One of each first, untimed, as for the reader above: the first answer of a serve just
# started also meets its 500 sources' first refreshes and a cold page cache.
timed(lambda _: urllib.request.Request(base + "/reader/api/0/unread-count?output=json", headers=auth), 1)
timed(lambda _: urllib.request.Request(base + "/reader/api/0/stream/contents/user/-/state/com.google/reading-list?n=100", headers=auth), 1)
counts, _ = timed(lambda _: urllib.request.Request(base + "/reader/api/0/unread-count?output=json", headers=auth), 100)
pages, body = timed(lambda i: urllib.request.Request(base + f"/reader/api/0/stream/contents/user/-/state/com.google/reading-list?n=100&c={i + 1}", headers=auth), 100)
items = body.count(b'"crawlTimeMsec"')
def number(card): return int.from_bytes(hashlib.sha256(card.encode()).digest()[:8], "big") & 0x7fffffffffffffff
def star(index):
    chunk = ids[index * 1000:(index + 1) * 1000]
    form = urllib.parse.urlencode([("a", "user/-/state/com.google/starred")] + [("i", str(number(i))) for i in chunk]).encode()
    return urllib.request.Request(base + "/reader/api/0/edit-tag", data=form, headers=auth)
stars, answer = timed(star, 20)
login, _ = timed(lambda _: urllib.request.Request(base + "/accounts/ClientLogin", data=b"Email=bench&Passwd=benchmark+password"), 5)
print(counts, pages, items, stars, answer.decode().strip(), login)
PY
)
read -r api_counts api_pages api_items api_stars api_answer api_login <<< "$api"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true
run user remove bench 2>/dev/null

# 100,000 cards gone: every feed now lists 200 fewer entries.
start_feeds $((entries - 200))
refresh_all
stop_feeds
gone=$(run store | awk 'NR > 1 && $1 != "total" { n += $3 } END { print n }')
"$bin/aggregate" serve --config "$work/Sources.yml" --state "$work/state" --port "$serve_port" --no-access-log > "$work/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
until grep -q "serving" "$work/serve.log" 2>/dev/null; do sleep 0.1; done
# Measured from where the run without a purge was: the serve's first refresh of every
# source over (each fails at once, the feeds are down) and its pages rendered, so that the
# row shows what the purge costs readers, not a serve starting.
settled() {
    curl -sf "$base/healthz?details=1" | python3 -c '
import json, sys
sources = json.load(sys.stdin)["sources"]
sys.exit(0 if len(sources) == int(sys.argv[1]) and all("checked" in s for s in sources.values()) else 1)' "$feeds"
}
until settled; do sleep 0.5; done
load 5s > /dev/null
load 40s > "$work/purging.txt" &
load_pid=$!
sleep 5
# A refresh that reaches nothing (offline) and applies keep: {gone_for: 1s}: the purge alone.
start=$(date +%s.%N)
"$bin/aggregate" --config "$work/Purge.yml" --state "$work/state" refresh --offline --source f0 2> /dev/null || true
purge=$(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')")
wait "$load_pid"
purging=$(cat "$work/purging.txt")
left=$(run store | awk 'NR > 1 && $1 != "total" { n += $3 } END { print n }')
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true

row() { echo "| $1 | $2 | $3 |" >> "$table"; }
{
    echo "Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) on $(nproc) cores ($(uname -m)): $feeds feeds of"
    echo "$entries entries recorded by \`aggregate refresh\` in $built s, indexed for search by the first search in $indexed s;"
    echo "$cards cards, $bytes bytes on disk ($per_card bytes a card)."
    echo
    echo "| job | p50 / p99 ms | note |"
    echo "|---|---:|---|"
} > "$table"
row "\`aggregate --version\` (a process starting)" "$(echo "$version" | tr ' ' /)" "200 runs"
row "\`aggregate --stored --page 1\`" "$(echo "$stored" | tr ' ' /)" "200 runs"
row "\`aggregate --stored --page 1 --sort price\`" "$(echo "$by_price" | tr ' ' /)" "200 runs"
row "serve: reader pages 2–101 of every card by price, each uncached" "$(echo "$reader" | tr ' ' /)" "one reader"
row "serve: the Unread view's first page (\`/\`), uncached" "$unread_page" "100 requests, one reader"
row "serve: the same page again, kept for its reader" "$kept_page" "100 requests, one reader, nothing marked between"
row "serve: two-word searches (\`/search?q=\`, 20 results)" "$searches" "$query_count searches, $full_pages of them with a full page"
row "lemon24's reader: the same searches (\`search_entries\`, 20 results)" "$(echo "$peer_search" | tr ' ' /)" "reader $reader_version, its FTS5 index of the same entries"
row "\`aggregate search\` (a process each)" "$search_cli" "50 of the searches"
row "serve: 10,000 cards marked read in one request (\`POST /read\`)" "$marks" "$mark_requests requests; the last marked $marked"
row "Google Reader API: \`unread-count\`" "$api_counts" "100 requests, a token"
row "Google Reader API: the reading list, 100 items (\`stream/contents\`)" "$api_pages" "pages 1–100 (c=), uncached; the last had $api_items items"
row "Google Reader API: 1,000 items starred (\`edit-tag\`)" "$api_stars" "20 requests by short ids; answered $api_answer"
row "Google Reader API: \`ClientLogin\` (bcrypt, cost 12)" "$api_login" "5 sign-ins: the hash's deliberate cost"
read -r rps p99 requests errors <<< "$quiet"
row "serve: 32 readers, pages 1–20 of the reader and /feed.atom" "– / $p99" "$rps requests/s, $errors errors"
read -r rps p99 requests errors <<< "$purging"
row "the same, while a purge removes $gone gone cards" "– / $p99" "$rps requests/s, $errors errors; the purge took $purge s, $left gone left"
cat "$table"
python3 Benchmarks/write-table.py docs/performance.md "store" "$table"
echo "wrote the table into docs/performance.md" >&2
