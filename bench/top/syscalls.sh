#!/usr/bin/env bash
# System calls of `top --all` (table and JSON) per process, from
# `strace -f -c`, for each binary given, interleaved:
#   bench/top/syscalls.sh BINARY... 
# Prints the processes (user and kernel threads) at the time, the total
# calls and calls per process, and the read/openat/close counts.
set -euo pipefail
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
kthreads=$(grep -l '^Kthread:.1' /proc/[0-9]*/status 2>/dev/null | wc -l)
procs=$(ls -d /proc/[0-9]* | wc -l)
echo "$procs processes, $kthreads kernel threads; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| binary | format | calls | per process | read | openat | close |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
for fmt in table json; do
  for bin in "$@"; do
    strace -f -c -o "$work/c" "$bin" top --all --format "$fmt" > /dev/null 2>&1 || true
    calls=$(awk '$NF=="total"{print $4}' "$work/c")
    get() { awk -v s="$1" '$NF==s{print $4}' "$work/c"; }
    printf '| %s | %s | %s | %.1f | %s | %s | %s |\n' "$(basename "$bin")" "$fmt" "$calls" \
      "$(echo "$calls / $procs" | bc -l)" "$(get read)" "$(get openat)" "$(get close)"
  done
done
