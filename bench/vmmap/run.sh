#!/usr/bin/env bash
# memtally vmmap against the seed tool on a generated 1,000,000-line
# `vmmap -noCoalesce` report: wall time with hyperfine, peak RSS with
# GNU time. Needs: hyperfine, python3, and /usr/bin/time (Debian package
# `time`: apt-get install -y time). The generated file goes to /tmp and is
# never committed.
#
#   bench/vmmap/run.sh [LINES]        # from the crate root; default 1000000
#   GPU_SHARE=1.0 bench/vmmap/run.sh   # every line an IOSurface/IOAccelerator region
#   RUNS=N                             # hyperfine runs per command (default 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
lines=${1:-1000000}
share=${GPU_SHARE:-0.25}
file=${TMPDIR:-/tmp}/memtally-vmmap-bench-$lines-$share.txt
seed=../shared/seeds/vmmap_seed.py
bin=target/release/memtally
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: install GNU time (apt-get install -y time)" >&2; exit 1; }
cargo build --release --quiet
[ -f "$file" ] || python3 bench/vmmap/gen.py --lines "$lines" --gpu-share "$share" "$file"
ls -l "$file"

# Same output, byte for byte, before timing anything.
python3 "$seed" --file "$file" >/tmp/memtally-vmmap-seed.out
"$bin" vmmap "$file" --seed-view >/tmp/memtally-vmmap-mt.out
cmp /tmp/memtally-vmmap-seed.out /tmp/memtally-vmmap-mt.out && echo "bench: --seed-view output identical to the seed's"

uptime
hyperfine --warmup 1 --runs "${RUNS:-5}" \
    -n seed "python3 $seed --file $file" \
    -n 'memtally --seed-view' "$bin vmmap $file --seed-view" \
    -n 'memtally (table, seed types)' "$bin vmmap $file --types IOAccelerator,IOSurface" \
    -n 'memtally (table, all types)' "$bin vmmap $file"

peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2 " KiB"}'; }
echo "peak RSS, seed:                      $(peak python3 "$seed" --file "$file")"
echo "peak RSS, memtally --seed-view:      $(peak "$bin" vmmap "$file" --seed-view)"
echo "peak RSS, memtally table seed types: $(peak "$bin" vmmap "$file" --types IOAccelerator,IOSurface)"
echo "peak RSS, memtally table all types:  $(peak "$bin" vmmap "$file")"
