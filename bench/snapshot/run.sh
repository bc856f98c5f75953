#!/usr/bin/env bash
# `snapshot` of every process beside its floors, `cat` of every process's
# smaps (and of the smaps and the rollups: what a snapshot's figures are
# read from), with N sleeping C children (bench/top/sleeper.c):
#   bench/snapshot/run.sh BASE NEW PAIRS N
# User-space instructions of each binary first (callgrind, which load does
# not move), then paired, interleaved CPU/wall/peak RSS (bench/pairs.py),
# then from `strace -f -c`: system calls, threads started (clone3/clone)
# and files opened, per process (every /proc entry, kernel threads
# included). Last, what the snapshot's PSS would be off by were its totals
# taken from the regions instead of the rollups (bench/snapshot/rounding.py).
set -euo pipefail
base=$1 new=$2 pairs=$3 n=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
source "$here/../top/spawn.sh"
trap 'unspawn; rm -rf "$work"' EXIT
spawn "$n"
procs=$(cd /proc && printf "%s\n" [0-9]* | wc -l)
echo "$n children: $procs processes; $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); load $(cut -d' ' -f1-3 /proc/loadavg)"
for bin in "$base" "$new"; do
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" snapshot > /dev/null 2> "$work/cg" || true
  refs=$(awk '/refs:/{gsub(",","",$NF); print $NF}' "$work/cg")
  printf '%s: %s user-space instructions, %.0f a process\n' "$(basename "$bin")" "$refs" "$(echo "$refs / $procs" | bc -l)"
done
python3 "$here/../pairs.py" "$pairs" \
  "cat=cat /proc/[0-9]*/smaps 2>/dev/null" \
  "cat-rollups=cat /proc/[0-9]*/smaps /proc/[0-9]*/smaps_rollup 2>/dev/null" \
  "base=$base snapshot" \
  "new=$new snapshot"
echo "| binary | calls | per process | threads started | openat | per process |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for bin in "$base" "$new"; do
  strace -f -c -o "$work/c" "$bin" snapshot > /dev/null 2>&1 || true
  get() { awk -v s="$1" '$NF==s{print $4}' "$work/c"; }
  calls=$(get total) opens=$(get openat)
  c3=$(get clone3) c2=$(get clone)
  threads=$(( ${c3:-0} + ${c2:-0} ))
  printf '| %s | %s | %.1f | %s | %s | %.1f |\n' "$(basename "$bin")" "$calls" \
    "$(echo "$calls / $procs" | bc -l)" "$threads" "$opens" "$(echo "$opens / $procs" | bc -l)"
done
"$new" snapshot -o "$work/s.jsonl" 2>/dev/null
python3 "$here/rounding.py" "$work/s.jsonl"
