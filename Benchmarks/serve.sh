#!/usr/bin/env bash
# The load benchmark of `aggregate serve` (docs/performance.md): warm-cache
# /feed.atom?per_page=50 on loopback with wrk, throughput and latency percentiles, then
# the server's RSS after each of ROUNDS rounds (memory must not grow from round to round).
#   bash Benchmarks/serve.sh [SECONDS_PER_ROUND] [ROUNDS]    (defaults: 15 and 3)
# Needs the release build (built or brought up to date here) and wrk (installed from Debian if missing).
# Traffic goes to 127.0.0.1 only; every round is bounded by its duration.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
rounds=${2:-3}
bin=${BENCH_BIN:-.build/release}
if [ -z "${BENCH_BIN:-}" ]; then
    swift build -c release --product aggregate >&2
    swift build -c release --product fixture-server >&2
fi
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d)
trap 'kill $upstream $served 2>/dev/null; rm -rf "$work"' EXIT

"$bin/fixture-server" --port 0 --write-sources "$work/Sources.yml" > "$work/upstream.log" &
upstream=$!
until grep -q listening "$work/upstream.log" 2>/dev/null && [ -s "$work/Sources.yml" ]; do sleep 0.1; done
"$bin/aggregate" serve --port 0 --config "$work/Sources.yml" --state-dir "$work/state" 2> "$work/serve.log" &
served=$!
until grep -q "serving" "$work/serve.log" 2>/dev/null; do sleep 0.1; done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -1)
url="$base/feed.atom?per_page=50"
curl -sf "$url" > /dev/null   # warm: every source fresh in the cache from here on
rss() { awk '/VmRSS/ {print $2 / 1024 " MB"}' "/proc/$served/status"; }
echo "# aggregate serve, warm cache, GET /feed.atom?per_page=50, $(nproc) cores, wrk -t2 -c32"
echo "RSS after warm-up: $(rss)"
for round in $(seq "$rounds"); do
    wrk -t2 -c32 -d"${seconds}s" --latency "$url" > "$work/wrk.txt"
    requests=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
    echo "round $round: $requests requests, $(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt") req/s," \
        "p50 $(awk '$1 == "50%" {print $2}' "$work/wrk.txt"), p99 $(awk '$1 == "99%" {print $2}' "$work/wrk.txt")," \
        "errors: $(grep -E 'Non-2xx|Socket errors' "$work/wrk.txt" | tr -s ' ' | paste -sd ' ' || echo none)," \
        "RSS $(rss)"
done
upstream_base=$(sed -n 's/^listening on //p' "$work/upstream.log")
echo "upstream requests in all (the warm-up's only): $(curl -sf "$upstream_base/_fixture/requests" | grep -c '"route"')"
