#!/bin/bash
# `gpu --tree SMALL` beside a live child of 500,000 mappings, two binaries
# in turn (interleaved), each run under /usr/bin/time: wall, user, sys and
# peak RSS; then whether both printed the same JSON.
#
#   bench/gpu/tree.sh BEFORE_BINARY AFTER_BINARY [RUNS]
#
# Raises vm.max_map_count to 600,000 for the child (root) and restores it,
# and kills both children, on exit whatever happens.
set -u
before=$1 after=$2 runs=${3:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
old=$(sysctl -n vm.max_map_count)
work=$(mktemp -d)
big='' small=''
cleanup() {
    [ -n "$big" ] && kill "$big" 2>/dev/null
    [ -n "$small" ] && kill "$small" 2>/dev/null
    wait 2>/dev/null
    sysctl -qw vm.max_map_count="$old"
    rm -rf "$work"
}
trap cleanup EXIT
sysctl -qw vm.max_map_count=600000
gcc -O2 -o "$work/many_maps" "$repo/bench/smaps/many_maps.c"
"$work/many_maps" 500000 > "$work/ready" & big=$!
for _ in $(seq 600); do [ -s "$work/ready" ] && break; sleep 0.1; done
echo "many_maps: $(cat "$work/ready") ($(grep -c . /proc/$big/maps) lines of maps)"
sleep 600 & small=$!
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$runs"); do
    for which in before after; do
        bin=$before; [ "$which" = after ] && bin=$after
        /usr/bin/time -f "$which wall=%e s user=%U s sys=%S s peak_rss=%M KiB" \
            "$bin" gpu --tree "$small" --format json > "$work/$which.json" 2> "$work/time"
        tail -1 "$work/time"
    done
done
norm() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$1"; }
[ "$(norm "$work/before.json")" = "$(norm "$work/after.json")" ] && echo "same JSON from both"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
