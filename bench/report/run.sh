#!/usr/bin/env bash
# memtally report benchmark (issue 23): the page of this machine's whole
# process list against `top --all --format json` (target: under twice its
# time), and the page of one process with 20,000 mappings (target: under a
# second), beside `show PID --format json` of the same process.
#
#   bench/report/run.sh [RUNS]          (default 10 runs per command)
#
# Environment:
#   MAPPINGS=N      mappings in the test process (default 20000)
#   MEMTALLY=PATH   binary to measure (default target/release/memtally)
#   NO_BUILD=1      do not run cargo build first
#   OUT=DIR         where results go (default a new directory under /tmp)
#
# Writes OUT/hyperfine.md and OUT/hyperfine.json, prints the two ratios
# and the pages' sizes. Run as root so every process is read in full.
# Needs gcc, hyperfine, python3.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-10}
mappings=${MAPPINGS:-20000}
memtally=${MEMTALLY:-$repo/target/release/memtally}
out=${OUT:-$(mktemp -d /tmp/memtally-bench-report.XXXXXX)}

for tool in gcc hyperfine python3; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
if [[ -z ${NO_BUILD:-} ]]; then
    (cd "$repo" && cargo build --release --bin memtally)
fi

work=$(mktemp -d)
child=
cleanup() {
    if [[ -n $child ]]; then kill "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# The 20,000-mapping process of the smaps benchmark (bench/smaps/many_maps.c).
gcc -O1 -o "$work/many_maps" "$repo/bench/smaps/many_maps.c"
coproc MANY { exec "$work/many_maps" "$mappings"; }
child=$MANY_PID
read -r pid regions <&"${MANY[0]}"
echo "many_maps: pid $pid, $regions mappings; load: $(cut -d' ' -f1-3 /proc/loadavg); $(ls /proc | grep -c '^[0-9]') processes"

mkdir -p "$out"
hyperfine --warmup 2 --runs "$runs" -N \
    --export-markdown "$out/hyperfine.md" --export-json "$out/hyperfine.json" \
    -n "top --all --format json" "$memtally top --all --format json" \
    -n "report (every process)" "$memtally report -o $work/all.html" \
    -n "report --detail all (every process in full)" "$memtally report --detail all -o $work/full.html" \
    -n "show PID --format json (${mappings} mappings)" "$memtally show $pid --format json" \
    -n "report --pid PID (${mappings} mappings)" "$memtally report --pid $pid -o $work/one.html"

python3 - "$out/hyperfine.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
def mean(prefix):
    return next(v["mean"] for k, v in r.items() if k.startswith(prefix))
top, rep, full = mean("top --all"), mean("report (every"), mean("report --detail all")
one = mean("report --pid")
print(f"report of every process / top --all --format json: {rep / top:.2f}x (target < 2)")
print(f"report --detail all / top --all --format json: {full / top:.2f}x")
print(f"report of the many-mapping process: {one:.3f} s (target < 1 s)")
PY
ls -l "$work/all.html" "$work/full.html" "$work/one.html" | awk '{print $5, $9}'
echo "results in $out"
