#!/usr/bin/env bash
# `top --all --format json` beside its floor, `cat` of every process's
# smaps_rollup and status, with N sleeping C children for each N given:
#   bench/top/scale.sh BASE NEW PAIRS N...
# For each N: paired, interleaved CPU/wall/peak RSS (bench/pairs.py) of
# JSON and of the table,
# system calls per process (strace -f -c), allocations per process
# (valgrind --tool=dhat: blocks allocated in all). "Per process" divides
# by every /proc entry (kernel threads included), as syscalls.sh does.
set -euo pipefail
base=$1 new=$2 pairs=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
source "$here/spawn.sh"
trap 'unspawn; rm -rf "$work"' EXIT
for n in "$@"; do
  spawn "$n"
  procs=$(cd /proc && printf "%s\n" [0-9]* | wc -l)
  kthreads=$( (grep -l '^Kthread:.1' /proc/[0-9]*/status 2>/dev/null || true) | wc -l)
  echo "## $n children: $procs processes, $kthreads kernel threads; load $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 "$here/../pairs.py" "$pairs" \
    "cat=cat /proc/[0-9]*/smaps_rollup /proc/[0-9]*/status 2>/dev/null" \
    "base=$base top --all --format json" \
    "new=$new top --all --format json" \
    "base-table=$base top --all" \
    "new-table=$new top --all"
  echo "| binary | format | calls | per process | allocations | per process |"
  echo "| --- | --- | ---: | ---: | ---: | ---: |"
  for fmt in table json; do
    for bin in "$base" "$new"; do
      strace -f -c -o "$work/c" "$bin" top --all --format "$fmt" > /dev/null 2>&1 || true
      calls=$(awk '$NF=="total"{print $4}' "$work/c")
      valgrind --tool=dhat --dhat-out-file=/dev/null "$bin" top --all --format "$fmt" \
        > /dev/null 2> "$work/d" || true
      blocks=$(sed -n 's/.*Total: *[0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' "$work/d" | tr -d ,)
      printf '| %s | %s | %s | %.1f | %s | %.1f |\n' "$(basename "$bin")" "$fmt" "$calls" \
        "$(echo "$calls / $procs" | bc -l)" "$blocks" "$(echo "${blocks:-0} / $procs" | bc -l)"
    done
  done
  unspawn
done
