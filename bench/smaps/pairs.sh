#!/usr/bin/env bash
# `show PID --format json` against `cat /proc/PID/smaps` (issue 25's
# floor) at 1,000, 20,000 and 500,000 mappings, paired and interleaved by
# bench/pairs.py (CPU = user+sys from wait4).
#
#   bench/smaps/pairs.sh NEW [BASE] [PAIRS]     (default 10 pairs)
#
# MAPPINGS="1000 20000 500000" overrides the sizes. A size above the
# kernel's vm.max_map_count (65530 by default) cannot be made: it is
# skipped with a note (raise it as root: sysctl vm.max_map_count=600000).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
new=$1 base=${2:-} pairs=${3:-10}
work=$(mktemp -d)
child=
cleanup() {
    [[ -n $child ]] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
gcc -O2 -o "$work/many_maps" "$repo/bench/smaps/many_maps.c"
max=$(cat /proc/sys/vm/max_map_count)
for n in ${MAPPINGS:-1000 20000 500000}; do
    if (( n + 100 > max )); then
        echo "== $n mappings: skipped (vm.max_map_count is $max)"
        continue
    fi
    "$work/many_maps" "$n" > "$work/ready" &
    child=$!
    for _ in $(seq 600); do [[ -s $work/ready ]] && break; sleep 0.05; done
    read -r pid _ < "$work/ready"
    echo "== $n mappings (pid $pid, smaps $(wc -c < "/proc/$pid/smaps") bytes)"
    cmds=(cat="cat /proc/$pid/smaps" new="$new show $pid --format json")
    [[ -n $base ]] && cmds+=(base="$base show $pid --format json")
    python3 "$repo/bench/pairs.py" "$pairs" "${cmds[@]}"
    kill "$child"; wait "$child" 2>/dev/null || true
    child=
    rm -f "$work/ready"
done
