#!/usr/bin/env bash
# `memtally vmmap` (table and --format json) against `wc -l` of the same
# generated report, paired and interleaved (bench/pairs.py: medians of
# user+sys CPU, wall and peak RSS over the pairs, and the load).
#   bench/vmmap/pairs.sh NEW_BINARY [BASE_BINARY] [PAIRS] [LINES...]
# LINES: region lines of each generated report (default 100000 1000000).
# Each size is generated twice by bench/vmmap/gen.py (to $TMPDIR, removed
# at exit): as is, and with every 1,000th region line unreadable
# (`--odd-every 1000`, lines the region path cannot read).
set -euo pipefail
new=$(readlink -f "$1"); base=${2:+$(readlink -f "$2")}; pairs=${3:-10}
shift $(( $# < 3 ? $# : 3 ))
sizes=("$@")
[[ ${#sizes[@]} -eq 0 ]] && sizes=(100000 1000000)
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
for lines in "${sizes[@]}"; do
  for odd in 0 1000; do
    f=$work/vmmap-$lines-$odd.txt
    python3 "$repo/bench/vmmap/gen.py" --lines "$lines" --odd-every "$odd" "$f"
    echo
    echo "### $lines region lines, every ${odd/#0/no}th unreadable: $(stat -c %s "$f") bytes"
    args=(wc-l="wc -l $f"
          table-new="$new vmmap $f"
          json-new="$new vmmap $f --format json")
    [[ -n $base ]] && args+=(table-base="$base vmmap $f" json-base="$base vmmap $f --format json")
    python3 "$repo/bench/pairs.py" "$pairs" "${args[@]}"
  done
done
