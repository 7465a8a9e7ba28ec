#!/usr/bin/env bash
# The performance benchmark (docs/performance.md): aggregate against a curl + jq pipeline
# and a plain Python script doing the same job, side by side, on this machine, and the
# table it measures written into docs/performance.md.
#   bash Benchmarks/run.sh [RUNS] [SCALE ...]     (defaults: 5 runs, scales 250 and 500)
# Needs the release build (built or brought up to date here; BENCH_BIN=.build/debug tries
# the script quickly on a debug build, and then writes no table), jq, curl and python3 (the
# feed job installs feedparser and lemon24's reader from PyPI into a throw-away venv, and
# newsboat from Debian's packages; BENCH_FEEDS=N for N feeds).
# Quote ratios from one run, not absolute times.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
shift || true
scales=(250 500)
[ $# -gt 0 ] && scales=("$@")
bin=${BENCH_BIN:-.build/release}
if [ -z "${BENCH_BIN:-}" ]; then
    swift build -c release --static-swift-stdlib --product aggregate >&2
    swift build -c release --static-swift-stdlib --product fixture-server >&2
fi
work=$(mktemp -d)
servers=()
# Servers started in a command substitution (start_server) leave their pid in a file: the
# subshell cannot add it to the array.
trap 'kill "${servers[@]}" $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
table="$work/table.md"

# The daily run: a new state whose card store already holds the cards (a copy of STORE's
# cards.sqlite) and whose HTTP cache is cold, so every body is fetched and decoded again;
# then the command. Both daily rows go through it, so the copy costs them alike.
cat > "$work/daily.sh" <<'SH'
state=$(mktemp -d -p "$(dirname "$1")"); cp "$1/cards.sqlite" "$state/"; store=$1; shift
exec "$@" --state-dir "$state"
SH

# A table of the benchmark: its heading, then measure.py's rows ("label=command" each).
section() {
    echo
    echo "### $1"
    echo
    shift
    python3 Benchmarks/measure.py "$runs" "$@"
}

# Starts a fixture server with ARGS, waits for it, and prints its base URL.
start_server() {
    local log="$work/server-$RANDOM.log"
    "$bin/fixture-server" --port 0 "$@" > "$log" &
    echo $! > "$log.pid"
    until grep -q listening "$log" 2>/dev/null; do sleep 0.1; done
    sed -n 's/^listening on //p' "$log"
}

{
    echo "Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) on $(nproc) cores"
    echo "($(uname -m), $(swift --version 2>&1 | head -1 | sed 's/ (.*//')), $runs runs of each command, alternating."
} > "$table"

for scale in "${scales[@]}"; do
    base=$(start_server --scale "$scale")
    # The four list sources, with budgets that let every card through.
    bash Benchmarks/list-sources.sh "$base" > "$work/Sources-$scale.yml"
    # Warm the server's memo of scaled bodies, so every contender reads the same bytes.
    curl -sf "$base/dishwasher/api/search-valid-response.json" > /dev/null
    agg="$bin/aggregate --config $work/Sources-$scale.yml"
    {
        echo
        echo "### Bulk, cold cache: every card of four sources sorted by price, lists ${scale}-fold"
        echo
        python3 Benchmarks/measure.py "$runs" \
            "aggregate --all --sort price=$agg --state-dir \$(mktemp -d -p $work) --all --sort price" \
            "python3 peers/merge.py=python3 Benchmarks/peers/merge.py $base" \
            "curl + jq=bash Benchmarks/peers/merge-jq.sh $base" \
            "aggregate --all --sort price --no-record=$agg --state-dir \$(mktemp -d -p $work) --all --sort price --no-record"
        echo
        echo "### The daily run, lists ${scale}-fold: the card store holds the cards, the HTTP cache is cold"
        echo
        $agg --state-dir "$work/daily-$scale" --all --sort price > /dev/null
        python3 Benchmarks/measure.py "$runs" \
            "aggregate --all --sort price (daily)=bash $work/daily.sh $work/daily-$scale $agg --all --sort price" \
            "the same --no-record=bash $work/daily.sh $work/daily-$scale $agg --all --sort price --no-record" \
            "python3 peers/merge.py=python3 Benchmarks/peers/merge.py $base" \
            "curl + jq=bash Benchmarks/peers/merge-jq.sh $base"
        echo
        echo "### Warm, lists ${scale}-fold: every source fresh in the cache"
        echo
        $agg --state-dir "$work/warm-$scale" --all > /dev/null
        python3 Benchmarks/measure.py "$runs" \
            "aggregate --version=$bin/aggregate --version" \
            "aggregate --page 1 (warm)=$agg --state-dir $work/warm-$scale --page 1"
    } >> "$table"
done

# Fan-out: every upstream answers after 300 ms; five sources against one (recorded sizes).
echo '{"target": [{"latencyMs": 300}], "ltk": [{"latencyMs": 300}], "reqres": [{"latencyMs": 300}], "dishwasher": [{"latencyMs": 300}], "cabify": [{"latencyMs": 300}]}' > "$work/slow.json"
"$bin/fixture-server" --port 0 --scenario "$work/slow.json" --write-sources "$work/Slow.yml" > "$work/slow.log" &
servers+=($!)
until grep -q listening "$work/slow.log" 2>/dev/null && [ -s "$work/Slow.yml" ]; do sleep 0.1; done
# At most 4 requests are in flight per host (docs/network-and-cache.md): real upstreams are
# five hosts, so one source here goes through the name localhost.
sed -i '/id: cabify/,/url:/ s|http://127.0.0.1|http://localhost|' "$work/Slow.yml"
slowagg="$bin/aggregate --config $work/Slow.yml --state-dir $work/slow-state"
{
    echo
    echo "### Fan-out: every upstream answers after 300 ms (recorded sizes)"
    echo
    python3 Benchmarks/measure.py "$runs" \
        "one slow source=rm -rf $work/slow-state; $slowagg --source cabify" \
        "five slow sources=rm -rf $work/slow-state; $slowagg --source target --source ltk --source users --source dishwashers --source cabify"
} >> "$table"

# Feeds: 500 made-up feeds of 50 entries (Atom and RSS by turns, about 25 MB) on loopback,
# every entry of all of them newest first, against feedparser with a thread pool.
feeds=${BENCH_FEEDS:-500}
# (reader's own copy of feedparser imports sgmllib, which Python 3.11 no longer ships:
# sgmllib3k is the package feedparser names for it.)
python3 -m venv "$work/venv" && "$work/venv/bin/pip" install --quiet feedparser reader sgmllib3k
# newsboat, the peer a terminal user would pick for "fetch my feeds into a local database".
if ! command -v newsboat > /dev/null; then
    apt-get update -q > /dev/null && apt-get install -y -q newsboat > /dev/null
fi
"$bin/fixture-server" --port 0 --feeds "$feeds" > "$work/feeds.log" &
servers+=($!)
until grep -q listening "$work/feeds.log" 2>/dev/null; do sleep 0.1; done
feedbase=$(sed -n 's/^listening on //p' "$work/feeds.log")
{
    echo "sources:"
    for ((n = 0; n < feeds; n++)); do echo "  - {id: f$n, plugin: feed, url: $feedbase/feeds/$n.xml, fallback: none}"; done
} > "$work/Feeds.yml"
feedagg="$bin/aggregate --config $work/Feeds.yml --all --sort date --format jsonl"
bytes=$(for ((n = 0; n < feeds; n++)); do curl -sf "$feedbase/feeds/$n.xml"; done | wc -c)
# The same entries, or the comparison means nothing: the sets of ids must be equal.
$feedagg --state-dir "$(mktemp -d -p "$work")" | jq -r .id | sort > "$work/ids-aggregate"
"$work/venv/bin/python" Benchmarks/peers/feeds.py "$feedbase" "$feeds" | jq -r .id | sort > "$work/ids-feedparser"
same=$(cmp -s "$work/ids-aggregate" "$work/ids-feedparser" && echo "the same $(wc -l < "$work/ids-aggregate") entry ids" \
    || echo "DIFFERENT entry ids ($(wc -l < "$work/ids-aggregate") against $(wc -l < "$work/ids-feedparser"))")
{
    echo
    echo "### Feeds, cold cache: every entry of $feeds feeds ($((bytes / 1048576)) MiB) newest first; $same"
    echo
    python3 Benchmarks/measure.py "$runs" \
        "aggregate --all --sort date=$feedagg --state-dir \$(mktemp -d -p $work)" \
        "python3 peers/feeds.py (feedparser)=$work/venv/bin/python Benchmarks/peers/feeds.py $feedbase $feeds" \
        "aggregate refresh (into the card store)=$bin/aggregate --config $work/Feeds.yml refresh --state-dir \$(mktemp -d -p $work)" \
        "aggregate --all --sort date --merge (one card per item)=$feedagg --merge --state-dir \$(mktemp -d -p $work)"
    # Merging a warm run: every feed fresh in the cache, so the matcher is most of what differs.
    $feedagg --state-dir "$work/feeds-warm" > /dev/null
    section "Feeds, warm: every feed fresh in the cache; one card per item (\`--merge\`) against every card" \
        "aggregate --all --sort date (warm)=$feedagg --state-dir $work/feeds-warm" \
        "aggregate --all --sort date --merge (warm)=$feedagg --merge --state-dir $work/feeds-warm"
    # The daily run of the feed job: the store holds the entries, the cache is cold.
    $feedagg --state-dir "$work/feeds-daily" > /dev/null
    section "Feeds, the daily run: the card store holds the entries, the HTTP cache is cold" \
        "aggregate --all --sort date (daily)=bash $work/daily.sh $work/feeds-daily $feedagg" \
        "the same --no-record=bash $work/daily.sh $work/feeds-daily $feedagg --no-record" \
        "aggregate --all --sort date (first, empty store)=$feedagg --state-dir \$(mktemp -d -p $work)"
    # A second refresh of the same state: every feed answers 304 (the store moves last_seen).
    refreshed="$work/refreshed"
    $bin/aggregate --config "$work/Feeds.yml" refresh --state-dir "$refreshed"
    # The peers a user would pick to fetch feeds into a local database, each into a new one.
    for ((n = 0; n < feeds; n++)); do echo "$feedbase/feeds/$n.xml"; done > "$work/urls"
    echo "reload-threads 8" > "$work/newsboat.conf"
    newsboat -x reload -u "$work/urls" -c "$work/newsboat-check.db" -C "$work/newsboat.conf" > /dev/null 2>&1
    in_newsboat=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM rss_item').fetchone()[0])" "$work/newsboat-check.db")
    in_reader=$("$work/venv/bin/python" Benchmarks/peers/reader_refresh.py "$feedbase" "$feeds" "$work/reader-check.sqlite")
    in_store=$($bin/aggregate --config "$work/Feeds.yml" store --state-dir "$refreshed" | awk '$1 == "total" { print $2 }')
    echo
    echo "### Refresh into a local database: cold, then every feed unchanged (304); entries kept: aggregate $in_store, newsboat $in_newsboat, reader $in_reader"
    echo
    python3 Benchmarks/measure.py "$runs" \
        "aggregate refresh (cold)=$bin/aggregate --config $work/Feeds.yml refresh --state-dir \$(mktemp -d -p $work)" \
        "aggregate --all --no-record (cold, no store)=$feedagg --no-record --state-dir \$(mktemp -d -p $work)" \
        "aggregate refresh --refresh (warm, 304)=$bin/aggregate --config $work/Feeds.yml refresh --refresh --state-dir $refreshed" \
        "newsboat -x reload, 8 threads (cold)=newsboat -x reload -u $work/urls -c \$(mktemp -u -p $work).db -C $work/newsboat.conf" \
        "reader update_feeds, 8 workers (cold)=$work/venv/bin/python Benchmarks/peers/reader_refresh.py $feedbase $feeds \$(mktemp -u -p $work).sqlite"
} >> "$table"

cat "$table"
if [ -z "${BENCH_BIN:-}" ]; then
    python3 Benchmarks/write-table.py docs/performance.md benchmark "$table"
    echo "wrote the table into docs/performance.md" >&2
fi
