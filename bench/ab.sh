#!/usr/bin/env bash
# Before/after in one hyperfine run: `memtally show` of a 20,000-mapping
# process beside cat of its smaps, and `top --all` beside cat of every
# smaps_rollup, for two binaries.  bench/ab.sh BASE_BINARY NEW_BINARY [RUNS]
set -euo pipefail
base=$1; new=$2; runs=${3:-20}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
gcc -O2 -o "$work/many_maps" "$repo/bench/smaps/many_maps.c"
"$work/many_maps" 20000 > "$work/ready" &
child=$!
trap 'kill $child; rm -rf $work' EXIT
for _ in $(seq 100); do [[ -s $work/ready ]] && break; sleep 0.05; done
read -r pid count < "$work/ready"
echo "pid $pid: $(wc -l < /proc/$pid/maps) mappings; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 3 --runs "$runs" --export-json ${OUT:-/tmp}/show.json \
  -n cat "cat /proc/$pid/smaps" -n show-before "$base show $pid --format json" -n show-after "$new show $pid --format json"
hyperfine -N --warmup 3 --runs "$runs" --export-json ${OUT:-/tmp}/top.json \
  -n "cat rollups" "sh -c 'cat /proc/[0-9]*/smaps_rollup >/dev/null 2>&1; true'" \
  -n top-before "$base top --all --format json" -n top-after "$new top --all --format json"
