#!/usr/bin/env bash
# The card store on PostgreSQL beside SQLite, on the same cards (issue 60; docs/performance.md,
# "The card store on PostgreSQL"). Builds both stores the way a user's grows — FEEDS made-up
# feeds of ENTRIES entries on the fixture server (500 × 2,000 by default: a million cards),
# recorded by `aggregate refresh` into a state directory and into a throw-away PostgreSQL
# cluster (Tools/test-postgres.sh) — then measures on each:
#   - `aggregate --stored --page 1` in feed order, by price, newest first, by source and by
#     title, and `--unread` newest first, oldest first and in feed order:
#     the median of RUNS runs and the peak anonymous memory (Benchmarks/measure.py);
#   - `serve`, its upstreams down, once its first refreshes are over: its resident memory,
#     100 uncached reader pages and `/feed.atom` pages (p50, p99), 100 two-word searches.
#   BENCH_FEEDS=100 bash Benchmarks/store-postgres.sh [RUNS]   (a fifth of the cards)
# Prints its table, and writes it into docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
bin=${BENCH_BIN:-.build/release}
if [ -z "${BENCH_BIN:-}" ]; then
    swift build -c release --static-swift-stdlib --product aggregate >&2
    swift build -c release --static-swift-stdlib --product fixture-server >&2
fi
feeds=${BENCH_FEEDS:-500}
entries=${BENCH_ENTRIES:-2000}
work=$(mktemp -d)
# The cluster's own folder (its server runs as an unprivileged user, which $work's mode keeps out).
pg=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; Tools/test-postgres.sh stop "$pg" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
table="$work/table.md"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
upstream_port=$(free_port)
"$bin/fixture-server" --port "$upstream_port" --feeds "$feeds" --feed-entries "$entries" --feed-words 20000 > "$work/feeds.log" &
feeds_pid=$!
pids+=("$feeds_pid")
until grep -q listening "$work/feeds.log" 2>/dev/null; do sleep 0.1; done
{
    echo "sources:"
    for ((n = 0; n < feeds; n++)); do
        echo "  - {id: f$n, plugin: feed, url: http://127.0.0.1:$upstream_port/feeds/$n.xml, fallback: none, max_items: 100000, refresh: 86400}"
    done
} > "$work/Sources.yml"
# PostgreSQL as it is deployed for a store this size: shared buffers of a quarter of the
# memory, as its documentation advises (docs/performance.md measured the default 128 MB too:
# a search of common words then reads its rows from the kernel's cache every time).
memory_kib=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)
export AGGREGATE_TEST_POSTGRES_CONF="shared_buffers = ${BENCH_SHARED_BUFFERS:-$((memory_kib / 4 / 1024))MB}"
source <(Tools/test-postgres.sh start "$pg")
postgres=$AGGREGATE_TEST_POSTGRES
sqlite="$work/state"

# Records every feed into STATE, 50 at a time; prints the seconds it took.
build() {
    local start=$(date +%s.%N)
    for ((first = 0; first < feeds; first += 50)); do
        args=()
        for ((n = first; n < first + 50 && n < feeds; n++)); do args+=(--source "f$n"); done
        "$bin/aggregate" --config "$work/Sources.yml" --state "$1" refresh --refresh "${args[@]}"
    done
    "$bin/aggregate" --config "$work/Sources.yml" --state "$1" search indexed > /dev/null
    python3 -c "print(f'{$(date +%s.%N) - $start:.0f}')"
}
built_sqlite=$(build "$sqlite")
built_postgres=$(build "$postgres")
kill "$feeds_pid"; wait "$feeds_pid" 2>/dev/null || true
cards=$("$bin/aggregate" --config "$work/Sources.yml" --state "$sqlite" store | awk 'NR > 1 && $1 != "total" { n += $2 } END { print n }')
sync

{
    echo "Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) on $(nproc) cores: $cards cards of $feeds feeds,"
    echo "recorded in ${built_sqlite} s into SQLite and ${built_postgres} s into PostgreSQL $(psql --version | awk '{print $3}') (each with its search index;"
    echo "PostgreSQL's \`${AGGREGATE_TEST_POSTGRES_CONF}\`)."
    echo
    echo "### \`--stored --page 1\`, $runs runs each, alternating"
    echo
    agg="$bin/aggregate --config $work/Sources.yml"
    python3 Benchmarks/measure.py "$runs" \
        "SQLite, feed order=$agg --state $sqlite --stored --page 1" \
        "PostgreSQL, feed order=$agg --state $postgres --stored --page 1" \
        "SQLite, by price=$agg --state $sqlite --stored --page 1 --sort price" \
        "PostgreSQL, by price=$agg --state $postgres --stored --page 1 --sort price" \
        "SQLite, newest first=$agg --state $sqlite --stored --page 1 --sort date" \
        "PostgreSQL, newest first=$agg --state $postgres --stored --page 1 --sort date" \
        "SQLite, --unread=$agg --state $sqlite --unread --page 1 --sort date" \
        "PostgreSQL, --unread=$agg --state $postgres --unread --page 1 --sort date" \
        "SQLite, --unread oldest first=$agg --state $sqlite --unread --page 1 --sort date --order asc" \
        "PostgreSQL, --unread oldest first=$agg --state $postgres --unread --page 1 --sort date --order asc" \
        "SQLite, --unread in feed order=$agg --state $sqlite --unread --page 1 --sort feed" \
        "PostgreSQL, --unread in feed order=$agg --state $postgres --unread --page 1 --sort feed" \
        "SQLite, by source=$agg --state $sqlite --stored --page 1 --sort source" \
        "PostgreSQL, by source=$agg --state $postgres --stored --page 1 --sort source" \
        "SQLite, by title (no index: one pass)=$agg --state $sqlite --stored --page 1 --sort title" \
        "PostgreSQL, by title (no index: one pass)=$agg --state $postgres --stored --page 1 --sort title"
} > "$table"

# serve on each store, its upstreams down: readers are answered from what the store holds.
serve_rows() {
    local label=$1 state=$2 port
    port=$(free_port)
    "$bin/aggregate" serve --config "$work/Sources.yml" --state "$state" --port "$port" --no-access-log > "$work/serve.log" 2>&1 &
    local pid=$!
    pids+=("$pid")
    until grep -q "serving" "$work/serve.log" 2>/dev/null; do sleep 0.1; done
    local base="http://127.0.0.1:$port"
    for ((try = 0; try < 300; try++)); do
        curl -sf "$base/healthz" | python3 -c 'import json, sys; s = json.load(sys.stdin).get("sources") or {}; sys.exit(0 if s and all("checked" in v for v in s.values()) else 1)' && break
        sleep 0.2
    done
    local rss=$(awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")
    python3 - "$base" "$label" "$rss" <<'PY'
import random, sys, time, urllib.parse, urllib.request
base, label, rss = sys.argv[1], sys.argv[2], sys.argv[3]
def timed(paths):
    times = []
    for path in paths:
        start = time.perf_counter()
        urllib.request.urlopen(base + path, timeout=60).read()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return f"{times[len(times) // 2]:.1f} / {times[min(len(times) - 1, int(len(times) * 0.99))]:.1f}"
consonants, vowels = "bdfgklmnprstvz", "aeiou"
def syllable(n): return consonants[n % 70 // 5] + vowels[n % 5]
def word(rank): return syllable(rank % 70) + syllable(rank // 70 % 70) + (syllable(rank // 4900) if rank >= 4900 else "")
draw = random.Random(42)
searches = [f"/search?q={urllib.parse.quote(word(draw.randint(10, 300)) + ' ' + word(draw.randint(10, 3000)))}" for _ in range(100)]
reader = timed([f"/?view=all&page={page}" for page in range(2, 102)])
newest = timed([f"/?view=all&sort=date&page={page}" for page in range(2, 102)])
atom = timed([f"/feed.atom?page={page}" for page in range(2, 102)])
found = timed(searches)
print(f"| {label} | {rss} MiB | {reader} ms | {newest} ms | {atom} ms | {found} ms |")
PY
    kill "$pid"; wait "$pid" 2>/dev/null || true
}
{
    echo
    echo "### \`serve\` after its first refresh: resident memory, and uncached answers (p50 / p99 of 100 each)"
    echo
    echo "| store | RSS | reader pages | reader, newest first | \`/feed.atom\` pages | two-word searches |"
    echo "|---|---:|---:|---:|---:|---:|"
    serve_rows SQLite "$sqlite"
    serve_rows PostgreSQL "$postgres"
} >> "$table"

# A refresh of 500 new cards into each million-card store (issue 64): the recording, then
# the pass that writes their search rows and same-item keys (run by the first search after
# it), timed as that search less a second one with nothing left to write. The new feeds'
# links are those of f0..f2's first 500 entries: every new card has a copy to be marked.
more_port=$(free_port)
"$bin/fixture-server" --port "$more_port" --feeds 3 --feed-entries 500 --feed-words 20000 > "$work/more.log" &
pids+=($!)
until grep -q listening "$work/more.log" 2>/dev/null; do sleep 0.1; done
cp "$work/Sources.yml" "$work/Sources-more.yml"
for n in 0 1 2; do
    echo "  - {id: new$n, plugin: feed, url: http://127.0.0.1:$more_port/feeds/$n.xml, fallback: none, max_items: 100000}" >> "$work/Sources-more.yml"
done
seconds() { local start=$(date +%s.%N); "$@" > /dev/null; python3 -c "print($(date +%s.%N) - $start)"; }
increment_row() {
    local label=$1 state=$2 more="$bin/aggregate --config $work/Sources-more.yml --state $2" recorded=() indexed=()
    for n in 0 1 2; do
        recorded+=("$(seconds $more refresh --source "new$n")")
        local first=$(seconds $more search indexed) again=$(seconds $more search indexed)
        indexed+=("$(python3 -c "print($first - $again)")")
    done
    python3 - "$label" "${recorded[@]}" "${indexed[@]}" <<'PY'
import statistics, sys
label, times = sys.argv[1], [float(t) * 1000 for t in sys.argv[2:]]
recorded, indexed = times[:3], times[3:]
span = lambda xs: f"{statistics.median(xs):.0f} ms ({min(xs):.0f}–{max(xs):.0f})"
print(f"| {label} | {span(recorded)} | {span(indexed)} |")
PY
}
{
    echo
    echo "### A refresh of 500 new cards (each a copy of a kept one) into the million-card store: median of 3 (range)"
    echo
    echo "| store | \`refresh\` (recording) | writing their search rows and same-item keys |"
    echo "|---|---:|---:|"
    increment_row SQLite "$sqlite"
    increment_row PostgreSQL "$postgres"
} >> "$table"
cat "$table"
if [ -z "${BENCH_BIN:-}" ] && [ "$feeds" = 500 ]; then
    python3 Benchmarks/write-table.py docs/performance.md store-postgres "$table"
fi
