#!/usr/bin/env bash
# wss benchmark: the cost of `memtally wss PID` beyond its interval, beside
# Brendan Gregg's wss.pl on the same child and interval (issue 22: target
# memtally's overhead <= 2x wss.pl's own).
#
#   bench/wss/run.sh [RUNS]            (default 20 runs per tool)
#
# Environment:
#   TOTAL_MIB=N     the child's resident buffer (default 1024)
#   HOT_MIB=N       the part of it the child keeps touching (default 256)
#   INTERVAL=S      the interval, seconds (default 0.01: the cost dominates)
#   MEMTALLY=PATH   binary to measure (default target/release/memtally)
#   WSS_PL=PATH     the peer (default ../shared/peers/wss/wss.pl)
#   NO_BUILD=1      do not run cargo build first
#
# Each tool resets the child's referenced bits (clear_refs), sleeps the
# interval and reads its smaps. Overhead = wall time per run minus the
# interval; CPU = user + system time per run. Both tools are run as
# root, one after the other, RUNS times each, interleaved, so a change of
# load falls on both. Needs gcc, perl, /usr/bin/time.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-20}
total=$(( ${TOTAL_MIB:-1024} << 20 ))
hot=$(( ${HOT_MIB:-256} << 20 ))
interval=${INTERVAL:-0.01}
memtally=${MEMTALLY:-$repo/target/release/memtally}
wss_pl=${WSS_PL:-$repo/../shared/peers/wss/wss.pl}

for tool in gcc perl /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
[[ -f $wss_pl ]] || { echo "no wss.pl at $wss_pl" >&2; exit 2; }
if [[ -z ${NO_BUILD:-} ]]; then
    (cd "$repo" && cargo build --release --bin memtally)
fi

work=$(mktemp -d)
child=
cleanup() {
    [[ -n $child ]] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

gcc -O2 -o "$work/toucher" "$repo/bench/wss/toucher.c"
"$work/toucher" "$total" "$hot" > "$work/ready" &
child=$!
for _ in $(seq 600); do [[ -s $work/ready ]] && break; sleep 0.05; done
read -r pid < "$work/ready"
[[ $pid == "$child" ]] || { echo "toucher did not start" >&2; exit 1; }
echo "pid $pid: $(( total >> 20 )) MiB resident, $(( hot >> 20 )) MiB touched, interval ${interval}s, $runs runs each"
echo "$(nproc) CPUs, kernel $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"

# One run of a tool, timed: "wall user sys" in seconds, and its figure.
timed() {
    /usr/bin/time -f '%e %U %S' -o "$work/t" "$@" > "$work/o" 2>/dev/null
    cat "$work/t"
}
: > "$work/memtally.times"
: > "$work/wss_pl.times"
for _ in $(seq "$runs"); do
    timed "$memtally" wss "$pid" --interval "${interval}s" --format json >> "$work/memtally.times"
    mt=$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{total}{touched}' "$work/o" 2>/dev/null || echo '?')
    timed perl "$wss_pl" "$pid" "$interval" >> "$work/wss_pl.times"
    pl=$(tail -1 "$work/o" | awk '{ printf "%d", $4 * 1048576 }')
done
echo "last run's touched bytes: memtally $mt, wss.pl $pl"

summary() {
    awk -v runs="$runs" -v iv="$interval" -v name="$1" '
        { wall += $1; cpu += $2 + $3 }
        END { printf "%-9s overhead %7.1f ms/run  cpu %7.1f ms/run\n", name, (wall / runs - iv) * 1000, cpu / runs * 1000 }' "$2"
}
summary memtally "$work/memtally.times"
summary wss.pl "$work/wss_pl.times"
awk -v runs="$runs" -v iv="$interval" '
    FNR == 1 { f++ }
    { w[f] += $1; c[f] += $2 + $3 }
    END { printf "ratio memtally / wss.pl: overhead %.2fx, cpu %.2fx (target <= 2x)\n", (w[1] / runs - iv) / (w[2] / runs - iv), c[1] / c[2] }' \
    "$work/memtally.times" "$work/wss_pl.times"
