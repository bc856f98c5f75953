#!/usr/bin/env bash
# Size stress for memtally (issue: hostile input): a live process with
# 200,000 mappings, a generated 1 GiB smaps, a generated 2 GiB vmmap file.
# For each, the time and the peak memory (max RSS) of memtally, from
# /usr/bin/time. Then the tests too slow for `cargo test` (`#[ignore]`d,
# named `stress_`). Slow and large: outside the default test run.
#
#   scripts/stress/run.sh            (all four)
#   MAPPINGS=N SMAPS_BYTES=N VMMAP_LINES=N scripts/stress/run.sh
#
# Needs gcc, python3, /usr/bin/time (Debian package `time`), and root to
# raise vm.max_map_count (the default 65530 allows fewer mappings).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
memtally=${MEMTALLY:-$repo/target/release/memtally}
mappings=${MAPPINGS:-200000}
smaps_bytes=${SMAPS_BYTES:-$((1 << 30))}
vmmap_lines=${VMMAP_LINES:-20000000}
[[ -n ${NO_BUILD:-} ]] || (cd "$repo" && cargo build --release --bin memtally)
work=$(mktemp -d)
child=
cleanup() { [[ -n $child ]] && kill "$child" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

measure() { # label, command...
    local label=$1; shift
    /usr/bin/time -f "%e s %M KiB" -o "$work/time" "$@" > "$work/out" 2> "$work/err" || {
        echo "$label: exit $? $(head -c 300 "$work/err")"; return; }
    printf '%-44s %s  (output %s bytes)\n' "$label" "$(cat "$work/time")" "$(wc -c < "$work/out")"
}

echo "== $(nproc) CPUs, kernel $(uname -r), memtally $($memtally --version)"

echo "== a live process with $mappings mappings"
need=$((mappings + 1000))
if (( $(cat /proc/sys/vm/max_map_count) < need )); then
    sysctl -qw vm.max_map_count=$need || echo "cannot raise vm.max_map_count (need root): fewer mappings"
fi
gcc -O2 -o "$work/many_maps" "$repo/bench/smaps/many_maps.c"
"$work/many_maps" "$mappings" > "$work/ready" &
child=$!
for _ in $(seq 600); do [[ -s $work/ready ]] && break; sleep 0.1; done
read -r pid count < "$work/ready"
echo "pid $pid: $(wc -l < /proc/$pid/maps) mappings, smaps $(wc -c < /proc/$pid/smaps) bytes"
measure "cat /proc/PID/smaps" cat /proc/$pid/smaps
measure "memtally show PID" "$memtally" show "$pid"
measure "memtally show PID --format json" "$memtally" show "$pid" --format json
measure "memtally show PID --regions --format csv" "$memtally" show "$pid" --regions --format csv
measure "memtally top --pid PID" "$memtally" top --pid "$pid"
kill "$child"; child=

echo "== a generated smaps of $smaps_bytes bytes"
python3 "$repo/scripts/stress/gen_smaps.py" "$work/proc" --bytes "$smaps_bytes"
measure "memtally --proc-root show 4242" "$memtally" --proc-root "$work/proc" show 4242
measure "memtally --proc-root show 4242 --format json" "$memtally" --proc-root "$work/proc" show 4242 --format json
measure "memtally --proc-root show 4242 --classic" "$memtally" --proc-root "$work/proc" show 4242 --classic
rm -rf "$work/proc"

echo "== a generated vmmap report of $vmmap_lines region lines"
python3 "$repo/bench/vmmap/gen.py" --lines "$vmmap_lines" "$work/big.vmmap"
echo "$(wc -c < "$work/big.vmmap") bytes"
measure "memtally vmmap FILE" "$memtally" vmmap "$work/big.vmmap"
measure "memtally vmmap FILE --format json" "$memtally" vmmap "$work/big.vmmap" --format json

echo "== the slow tests outside the default run (#[ignore], named stress_)"
# Hostile trees whose files are devices or 2 GB giants, every file of a
# v1 cgroup tree spoiled (the default run sweeps its cgroup files), the explorer
# answering keys while 500,000 mappings are read, vmmap's peak memory on
# 16 MB of region types and a report page of 200,000 regions: minutes on
# a 2-core machine.
(cd "$repo" && cargo test --locked -p memtally-cli --test cli -- --ignored stress_)
# The library's: 100,000 DRM regions of one GPU client shown in linear time.
(cd "$repo" && cargo test --locked -p memtally-core --lib -- --ignored stress_)
