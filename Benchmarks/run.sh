#!/usr/bin/env bash
# The performance benchmark (README, "Performance"): aggregate against a curl + jq
# pipeline and a plain Python script doing the same job, side by side, on this machine.
#   bash Benchmarks/run.sh [SCALE] [RUNS]     (defaults: 250-fold lists, 5 runs each)
# Needs a release build (built here if missing), jq, curl and python3. Quote ratios from
# one run, not absolute times.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-250}
runs=${2:-5}
bin=${BENCH_BIN:-.build/release}   # BENCH_BIN=.build/debug to try the script quickly
[ -x "$bin/aggregate" ] && [ -x "$bin/fixture-server" ] || swift build -c release >&2
work=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT

"$bin/fixture-server" --port 0 --scale "$scale" > "$work/server.log" &
server=$!
until grep -q listening "$work/server.log" 2>/dev/null; do sleep 0.1; done
base=$(sed -n 's/^listening on //p' "$work/server.log")

# The four list sources, with budgets that let every card through.
cat > "$work/Sources.yml" <<YAML
sources:
  - {id: target, plugin: target-deals, url: $base/target, max_items: 1000000, max_body: 1GiB, fallback: none}
  - {id: users, plugin: reqres, url: $base/reqres, max_items: 1000000, max_pages: 10000, max_body: 1GiB, fallback: none}
  - id: dishwashers
    plugin: dishwashers
    url: $base/dishwasher/api/search-valid-response.json
    max_items: 1000000
    max_body: 1GiB
    fallback: none
    options: {detail_url: $base/dishwasher/api/product-search-response.json, image_base: $base/dishwasher/images/}
  - {id: cabify, plugin: cabify, url: $base/cabify/Products.json, max_items: 1000000, max_body: 1GiB, fallback: none}
YAML
# Warm the server's memo of scaled bodies, so every contender reads the same bytes.
curl -sf "$base/dishwasher/api/search-valid-response.json" > /dev/null
agg="$bin/aggregate --config $work/Sources.yml --state-dir $work/state"

echo "# bulk, cold cache: every card sorted by price, scale $scale, $runs runs each, $(nproc) cores"
python3 Benchmarks/measure.py "$runs" \
    "aggregate --all --sort price=rm -rf $work/state; $agg --all --sort price" \
    "python3 peers/merge.py=python3 Benchmarks/peers/merge.py $base" \
    "curl + jq=bash Benchmarks/peers/merge-jq.sh $base"

echo
echo "# warm: every source fresh in the cache, page 1 of the same feed"
$agg --all > /dev/null
python3 Benchmarks/measure.py "$runs" \
    "aggregate --version=$bin/aggregate --version" \
    "aggregate --page 1 (warm)=$agg --page 1"
