#!/usr/bin/env bash
# The serve benchmark (docs/performance.md, issue 31): `aggregate serve` (release build)
# against the fixture server, loaded with wrk on loopback, beside nginx serving the same
# gzip bytes from a file, in one run; the table is written into docs/performance.md.
#   bash Benchmarks/serve.sh            (wrk and nginx come from Debian's packages when missing)
# Four jobs: the warm gzip feed (two rounds, against nginx); 1,000,000 requests in a row
# (errors, resident memory after the first 100k and at the end); 1,000 concurrent
# keep-alive connections; and readers while every upstream answer takes 2 s.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk > /dev/null || ! command -v nginx > /dev/null; then
    apt-get update -q > /dev/null && apt-get install -y -q wrk nginx-light > /dev/null
fi
swift build -c release --static-swift-stdlib --product aggregate >&2
swift build -c release --static-swift-stdlib --product fixture-server >&2
bin=.build/release
work=$(mktemp -d)
pids=()
cleanup() {
    kill "${pids[@]}" 2>/dev/null || true
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
feed="/feed.atom?per_page=50"
table="$work/table.md"

# Starts the fixture server (ARGS), writes its Sources.yml to $work/$1.yml, prints its base.
fixture() {
    local name=$1; shift
    "$bin/fixture-server" --port 0 --write-sources "$work/$name.yml" "$@" > "$work/$name.log" 2>&1 &
    pids+=($!)
    until grep -q listening "$work/$name.log" 2>/dev/null && [ -s "$work/$name.yml" ]; do sleep 0.1; done
}

# A free port on 127.0.0.1.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Starts `aggregate serve` on CONFIG and PORT, waits until every source had its first refresh.
serve() {
    local config=$1 port=$2
    # No access log, as nginx runs here (access_log off): the same work for both.
    "$bin/aggregate" serve --config "$config" --port "$port" --state-dir "$work/state-$port" --no-access-log > /dev/null 2> "$work/serve-$port.log" &
    pids+=($!)
    serve_pid=$!
    local sources
    sources=$("$bin/aggregate" sources --config "$config" --format jsonl | grep -c '"enabled":true')
    for _ in $(seq 300); do
        [ "$(curl -sf "http://127.0.0.1:$port/healthz" | grep -o next_refresh | wc -l)" -ge "$sources" ] && break
        sleep 0.1
    done
    curl -sf -o /dev/null -H "Accept-Encoding: gzip" "http://127.0.0.1:$port$feed"
}

# wrk ARGS… URL → "rps p99ms requests errors"
load() {
    wrk --latency "$@" > "$work/wrk.out" 2>&1
    python3 Benchmarks/wrk-summary.py "$work/wrk.out"
}

rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

ours_port=$(free_port)
nginx_port=$(free_port)
slow_port=$(free_port)
fixture plain
serve "$work/plain.yml" "$ours_port"
curl -sf -H "Accept-Encoding: gzip" "http://127.0.0.1:$ours_port$feed" -o "$work/feed.atom.gz"
mkdir -p "$work/www" && cp "$work/feed.atom.gz" "$work/www/feed.atom"
chmod 755 "$work" "$work/www" && chmod 644 "$work/www/feed.atom"   # nginx's workers run as nobody
cat > "$work/nginx.conf" <<EOF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$nginx_port;
    location / { root $work/www; default_type application/atom+xml; add_header Content-Encoding gzip; add_header Vary Accept-Encoding; }
  }
}
EOF
nginx -c "$work/nginx.conf"
sleep 0.5

{
    echo "Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) on $(nproc) cores ($(uname -m)), wrk and the servers"
    echo "sharing them; $(stat -c %s "$work/feed.atom.gz") bytes of gzip per answer; neither server writes an access log."
    echo
    echo "| job | requests/s | p99 | requests | errors | note |"
    echo "|---|---:|---:|---:|---:|---|"
} > "$table"

row() { # LABEL "rps p99 requests errors" NOTE
    read -r rps p99 requests errors <<< "$2"
    echo "| $1 | $rps | $p99 ms | $requests | $errors | $3 |" >> "$table"
}

for round in 1 2; do
    ours=$(load -t2 -c32 -d10s -H "Accept-Encoding: gzip" "http://127.0.0.1:$ours_port$feed")
    theirs=$(load -t2 -c32 -d10s "http://127.0.0.1:$nginx_port/feed.atom")
    [ "$(echo "$theirs" | cut -d' ' -f4)" = 0 ] || { echo "nginx answered errors: $(cat "$work/nginx-error.log")" >&2; exit 1; }
    ratio=$(python3 -c "print(f'{${ours%% *} / ${theirs%% *}:.2f}')")
    row "warm gzip feed, round $round: aggregate serve" "$ours" "${ratio}× nginx"
    row "warm gzip feed, round $round: nginx, the same bytes from a file" "$theirs" ""
done

# 1,000,000 requests in a row (wrk runs for a time: long enough at the throughput just
# measured, the table says how many it made); resident memory once 100k are answered, and at the end.
seconds=$(python3 -c "import math; print(math.ceil(1_100_000 / ${ours%% *}))")
wrk --latency -t2 -c32 -d"${seconds}s" -H "Accept-Encoding: gzip" "http://127.0.0.1:$ours_port$feed" > "$work/wrk.out" 2>&1 &
wrk_pid=$!
# The 100k mark, from the throughput just measured.
sleep "$(python3 -c "print(100000 / ${ours%% *})")"
first=$(rss "$serve_pid")
wait "$wrk_pid"
last=$(rss "$serve_pid")
million=$(python3 Benchmarks/wrk-summary.py "$work/wrk.out")
row "1,000,000 requests in a row" "$million" "RSS ${first:-?} KiB after 100k, $last KiB at the end ($(python3 -c "print(f'{($last - ${first:-$last}) / ${first:-$last} * 100:+.1f}')") %)"

# 1,000 concurrent keep-alive connections.
# (serve holds up to --max-connections 2048 by default.)
row "1,000 connections at once" "$(load -t2 -c1000 -d10s -H "Accept-Encoding: gzip" "http://127.0.0.1:$ours_port$feed")" "keep-alive"

# Every upstream answer takes 2 s; sources refreshed every 5 s, so refreshes run throughout.
python3 - "$work/plain.yml" "$work/slow-sources.yml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"(\n  - id: [^\n]+\n)", r"\1    refresh: 5\n", text))
EOF
echo '{"cabify": [{"latencyMs": 2000}], "target": [{"latencyMs": 2000}], "reqres": [{"latencyMs": 2000}], "ltk": [{"latencyMs": 2000}], "dishwasher": [{"latencyMs": 2000}]}' > "$work/slow.json"
sed "s|$(sed -n 's/^listening on //p' "$work/plain.log")|BASE|" "$work/slow-sources.yml" > "$work/slow-template.yml"
fixture slow --scenario "$work/slow.json"
sed "s|BASE|$(sed -n 's/^listening on //p' "$work/slow.log")|" "$work/slow-template.yml" > "$work/slow-sources.yml"
serve "$work/slow-sources.yml" "$slow_port"
row "warm gzip feed, every upstream answer taking 2 s" "$(load -t2 -c32 -d15s -H "Accept-Encoding: gzip" "http://127.0.0.1:$slow_port$feed")" \
    "$(curl -sf "$(sed -n 's/^listening on //p' "$work/slow.log")/_fixture/requests" | grep -c '"route"') upstream requests meanwhile, each 2 s; refresh: 5"

cat "$table"
python3 Benchmarks/write-table.py docs/performance.md serve "$table"
echo "wrote the table into docs/performance.md" >&2
