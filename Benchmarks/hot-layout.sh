#!/usr/bin/env bash
# Regenerates the code layout of the release link, Sources/aggregate/Layout/ (README,
# "Performance"): the benchmark's jobs and the everyday commands run under valgrind's
# callgrind, and every function that ran (ours, the packages', the Swift runtime's) is laid
# out side by side at the front of the code. Run it after large changes, then rebuild and
# rerun Benchmarks/run.sh.    bash Benchmarks/hot-layout.sh [SCALE]    (default 250)
# Needs valgrind and objcopy (valgrind is installed from Debian if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-250}
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
work=$(mktemp -d)
trap 'kill $server $recorded 2>/dev/null; rm -rf "$work"' EXIT

# The link map says which section holds which function; asking for it relinks, no more.
bash Tools/release-build.sh aggregate -Xlinker --no-demangle -Xlinker "-Map=$work/aggregate.map" >&2
bash Tools/release-build.sh fixture-server >&2
# valgrind 3.19 cannot read the toolchain's DWARF 5; the symbol table is all callgrind needs.
objcopy --strip-debug .build/release/aggregate "$work/aggregate"
profile() {
    local name=$1
    shift
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.callgrind" \
        "$work/aggregate" "$@" > /dev/null 2> "$work/$name.log" || { cat "$work/$name.log" >&2; exit 1; }
}

# The benchmark's bulk job and warm page, over the same four list sources.
.build/release/fixture-server --port 0 --scale "$scale" > "$work/server.log" &
server=$!
until grep -q listening "$work/server.log" 2>/dev/null; do sleep 0.1; done
bash Benchmarks/list-sources.sh "$(sed -n 's/^listening on //p' "$work/server.log")" > "$work/Sources.yml"
profile bulk --config "$work/Sources.yml" --state-dir "$work/state" --all --sort price
profile warm --config "$work/Sources.yml" --state-dir "$work/state" --page 1

# Every source at recorded sizes: cold, warm as text, a second page, and the version.
.build/release/fixture-server --port 0 --write-sources "$work/Recorded.yml" > "$work/recorded.log" &
recorded=$!
until grep -q listening "$work/recorded.log" 2>/dev/null && [ -s "$work/Recorded.yml" ]; do sleep 0.1; done
profile recorded --config "$work/Recorded.yml" --state-dir "$work/recorded-state"
profile recorded-text --config "$work/Recorded.yml" --state-dir "$work/recorded-state" --format text
profile second-page --config "$work/Recorded.yml" --state-dir "$work/recorded-state" --source ltk --page 2
profile version --version

python3 Benchmarks/hot_layout.py "$work/aggregate" "$work/aggregate.map" Sources/aggregate/Layout "$work"/*.callgrind
