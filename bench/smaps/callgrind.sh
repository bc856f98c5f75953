#!/usr/bin/env bash
# User-space instructions of whole runs (callgrind), for each binary given:
# `show PID --format json` of a live `many_maps` child at 1,000 and 20,000
# mappings (a mapping's cost: the difference over the 19,000 between), and
# on trees generated from the recorded gst-launch process
# (bench/scale/gen_proc.py): `show` of one process of 20,000 mappings, and
# `top --all` (table and JSON) of 1,000 processes.
#
#   bench/smaps/callgrind.sh BIN...
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
child=
cleanup() {
    [[ -n $child ]] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
ir() {
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$@" > /dev/null 2> "$work/cg.err"
    awk '/^(summary|totals):/ {print $2; exit}' "$work/cg.out"
}
gcc -O2 -o "$work/many_maps" "$repo/bench/smaps/many_maps.c"
python3 "$repo/bench/scale/gen_proc.py" "$work/procs" --procs 1000 > /dev/null
python3 "$repo/bench/scale/gen_proc.py" "$work/maps" --procs 1 --maps 20000 > /dev/null
for n in 1000 20000; do
    "$work/many_maps" "$n" > "$work/ready" &
    child=$!
    for _ in $(seq 600); do [[ -s $work/ready ]] && break; sleep 0.05; done
    read -r pid _ < "$work/ready"
    for bin in "$@"; do
        echo "live show --format json, $n mappings: $bin $(ir "$bin" show "$pid" --format json)"
    done
    kill "$child"; wait "$child" 2>/dev/null || true
    child=
    rm -f "$work/ready"
done
for bin in "$@"; do
    echo "recorded show --format json, 20000 mappings: $bin $(ir "$bin" --proc-root "$work/maps" show 100000 --format json)"
    echo "recorded top --all, 1000 processes: $bin $(ir "$bin" --proc-root "$work/procs" top --all)"
    echo "recorded top --all --format json, 1000 processes: $bin $(ir "$bin" --proc-root "$work/procs" top --all --format json)"
done
