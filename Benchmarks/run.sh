#!/usr/bin/env bash
# The performance benchmark (README, "Performance"): aggregate against a curl + jq
# pipeline and a plain Python script doing the same job, side by side, on this machine.
#   bash Benchmarks/run.sh [SCALE] [RUNS]     (defaults: 250-fold lists, 5 runs each)
# Needs the release build (built or brought up to date here; BENCH_BIN=.build/debug tries
# the script quickly on a debug build), jq, curl and python3. Quote ratios from one run,
# not absolute times.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-250}
runs=${2:-5}
bin=${BENCH_BIN:-.build/release}
if [ -z "${BENCH_BIN:-}" ]; then
    # The release build as the README makes it; seconds when it is current.
    swift build -c release --product aggregate >&2
    swift build -c release --product fixture-server >&2
fi
work=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT

"$bin/fixture-server" --port 0 --scale "$scale" > "$work/server.log" &
server=$!
until grep -q listening "$work/server.log" 2>/dev/null; do sleep 0.1; done
base=$(sed -n 's/^listening on //p' "$work/server.log")

# The four list sources, with budgets that let every card through.
bash Benchmarks/list-sources.sh "$base" > "$work/Sources.yml"
# Warm the server's memo of scaled bodies, so every contender reads the same bytes.
curl -sf "$base/dishwasher/api/search-valid-response.json" > /dev/null
agg="$bin/aggregate --config $work/Sources.yml --state-dir $work/state"

echo "# bulk, cold cache: every card sorted by price, scale $scale, $runs runs each, $(nproc) cores"
python3 Benchmarks/measure.py "$runs" \
    "aggregate --all --sort price=$bin/aggregate --config $work/Sources.yml --state-dir \$(mktemp -d -p $work) --all --sort price" \
    "python3 peers/merge.py=python3 Benchmarks/peers/merge.py $base" \
    "curl + jq=bash Benchmarks/peers/merge-jq.sh $base"

echo
echo "# warm: every source fresh in the cache, page 1 of the same feed"
$agg --all > /dev/null
python3 Benchmarks/measure.py "$runs" \
    "aggregate --version=$bin/aggregate --version" \
    "aggregate --page 1 (warm)=$agg --page 1"

echo
echo "# fan-out: every upstream answers after 300 ms; five sources against one (recorded sizes)"
echo '{"target": [{"latencyMs": 300}], "ltk": [{"latencyMs": 300}], "reqres": [{"latencyMs": 300}], "dishwasher": [{"latencyMs": 300}], "cabify": [{"latencyMs": 300}]}' > "$work/slow.json"
"$bin/fixture-server" --port 0 --scenario "$work/slow.json" --write-sources "$work/Slow.yml" > "$work/slow.log" &
slow=$!
trap 'kill $server $slow 2>/dev/null; rm -rf "$work"' EXIT
until grep -q listening "$work/slow.log" 2>/dev/null && [ -s "$work/Slow.yml" ]; do sleep 0.1; done
# At most 4 requests are in flight per host (README, "Network"): real upstreams are five
# hosts, so one source here goes through the name localhost.
sed -i '/id: cabify/,/url:/ s|http://127.0.0.1|http://localhost|' "$work/Slow.yml"
slowagg="$bin/aggregate --config $work/Slow.yml --state-dir $work/slow-state"
python3 Benchmarks/measure.py "$runs" \
    "one slow source=rm -rf $work/slow-state; $slowagg --source cabify" \
    "five slow sources=rm -rf $work/slow-state; $slowagg --source target --source ltk --source users --source dishwashers --source cabify"
