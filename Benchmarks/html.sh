#!/usr/bin/env bash
# The html benchmark (issue 63, docs/performance.md): every item of 500 made-up shop list
# pages (100 items, 60-90 KB each, on the fixture server's /pages/ route) by aggregate's
# `plugin: html` sources, against Python with lxml + cssselect (what parsel and Scrapy use)
# and with selectolax (Lexbor, the fastest Python HTML parser), the same selectors, each
# with 8 fetches at a time. The three must print the same item ids, or the table says so.
#   bash Benchmarks/html.sh [RUNS]      (BENCH_PAGES=N for N pages; BENCH_BIN as run.sh)
# Installs lxml, cssselect and selectolax from PyPI into a throw-away venv.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
pages=${BENCH_PAGES:-500}
bin=${BENCH_BIN:-.build/release}
if [ -z "${BENCH_BIN:-}" ]; then
    swift build -c release --static-swift-stdlib --product aggregate >&2
    swift build -c release --static-swift-stdlib --product fixture-server >&2
fi
work=$(mktemp -d)
trap 'kill $(cat "$work/server.pid" 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
python3 -m venv "$work/venv" && "$work/venv/bin/pip" install --quiet lxml cssselect selectolax
"$bin/fixture-server" --port 0 --pages "$pages" > "$work/server.log" &
echo $! > "$work/server.pid"
until grep -q listening "$work/server.log" 2>/dev/null; do sleep 0.1; done
base=$(sed -n 's/^listening on //p' "$work/server.log")
{
    echo "sources:"
    for ((n = 0; n < pages; n++)); do
        echo "  - {id: p$n, plugin: html, url: $base/pages/$n.html, fallback: none, max_items: 1000, options: {item: \"li.product-card\", title: \"h3.title a\", link: \"h3.title a @href\", price: \"span.price\", id: \"@data-sku\", date: \"time @datetime\"}}"
    done
} > "$work/Pages.yml"
agg="$bin/aggregate --config $work/Pages.yml --all --format jsonl"
$agg --no-record --state-dir "$(mktemp -d -p "$work")" | jq -r .id | sort > "$work/ids-aggregate"
"$work/venv/bin/python" Benchmarks/peers/pages.py lxml "$base" "$pages" | jq -r .id | sort > "$work/ids-lxml"
"$work/venv/bin/python" Benchmarks/peers/pages.py selectolax "$base" "$pages" | jq -r .id | sort > "$work/ids-selectolax"
same="the same $(wc -l < "$work/ids-aggregate") item ids"
cmp -s "$work/ids-aggregate" "$work/ids-lxml" || same="DIFFERENT item ids from lxml ($(wc -l < "$work/ids-aggregate") against $(wc -l < "$work/ids-lxml"))"
cmp -s "$work/ids-aggregate" "$work/ids-selectolax" || same="$same; DIFFERENT from selectolax ($(wc -l < "$work/ids-selectolax"))"
bytes=$(for ((n = 0; n < pages; n++)); do curl -sf "$base/pages/$n.html"; done | wc -c)
table="$work/table.md"
{
    echo "Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) on $(nproc) cores, $runs runs of each command, alternating."
    echo
    echo "### Every item of $pages shop pages ($((bytes / 1048576)) MiB), cold cache; $same"
    echo
    python3 Benchmarks/measure.py "$runs" \
        "aggregate --all --no-record=$agg --no-record --state-dir \$(mktemp -d -p $work)" \
        "python3 peers/pages.py lxml (lxml + cssselect)=$work/venv/bin/python Benchmarks/peers/pages.py lxml $base $pages" \
        "python3 peers/pages.py selectolax=$work/venv/bin/python Benchmarks/peers/pages.py selectolax $base $pages" \
        "aggregate --all (recording into the card store)=$agg --state-dir \$(mktemp -d -p $work)"
} > "$table"
# full_content: auto on the 1,000 items of 10 list pages, every one new (nothing recorded):
# what the articles add to the run, against what fetching them alone costs (4 at a time,
# as aggregate fetches from one host).
articles=${BENCH_ARTICLE_PAGES:-10}
for with in plain whole; do
    {
        echo "sources:"
        for ((n = 0; n < articles; n++)); do
            extra=""; [ "$with" = whole ] && extra=", full_content: auto"
            echo "  - {id: p$n, plugin: html, url: $base/pages/$n.html, fallback: none$extra, options: {item: \"li.product-card\", title: \"h3.title a\", link: \"h3.title a @href\", id: \"@data-sku\"}}"
        done
    } > "$work/Articles-$with.yml"
done
whole="$bin/aggregate --config $work/Articles-whole.yml --all --format jsonl --no-record"
found=$($whole --state-dir "$(mktemp -d -p "$work")" | jq -r 'select(.details.content | length > 2000) | .id' | wc -l)
{
    echo
    echo "### full_content: auto on the $((articles * 100)) items of $articles list pages, every article fetched ($found of $((articles * 100)) cards given a whole article)"
    echo
    python3 Benchmarks/measure.py "$runs" \
        "aggregate --all --no-record (the list pages only)=$bin/aggregate --config $work/Articles-plain.yml --all --format jsonl --no-record --state-dir \$(mktemp -d -p $work)" \
        "aggregate --all --no-record, full_content: auto=$whole --state-dir \$(mktemp -d -p $work)" \
        "python3 peers/pages.py articles (the $((articles * 100)) fetches alone)=$work/venv/bin/python Benchmarks/peers/pages.py articles $base $articles"
} >> "$table"
cat "$table"
if [ -z "${BENCH_BIN:-}" ]; then
    python3 Benchmarks/write-table.py docs/performance.md html "$table"
    echo "wrote the table into docs/performance.md" >&2
fi
