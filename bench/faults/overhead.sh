#!/usr/bin/env bash
# The cost of `memtally faults` on the traced process: a C child touches
# 1 GiB of new anonymous memory (one write a 4 KiB page, transparent huge
# pages off: 262,144 faults) and prints how long its loop took (its own
# clock); memtally's own CPU time is /usr/bin/time's user + system.
# Runs alternate: untraced, then traced every fault and with --sample 10,
# each with DWARF stacks (--unwind dwarf, the default: 8 KiB of stack
# copied a sample) and with the kernel's frame-pointer chains only.
# Usage: bench/faults/overhead.sh [MEMTALLY] [RUNS]   (run as root)
set -euo pipefail
memtally=${1:-target/release/memtally}
runs=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/touch.c" <<'C'
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
int main(void) {
    size_t n = 1UL << 30;
    usleep(500000); /* the recorder starts meanwhile */
    char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(p, n, MADV_NOHUGEPAGE);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
C
cc -O2 -fno-omit-frame-pointer -o "$dir/touch" "$dir/touch.c"
echo "mode loop_s memtally_user_s memtally_sys_s samples lost"
for i in $(seq "$runs"); do
    echo "untraced $("$dir/touch") - - - -"
    for unwind in dwarf fp; do
        for sample in 1 10; do
            "$dir/touch" > "$dir/loop" &
            pid=$!
            /usr/bin/time -f "%U %S" -o "$dir/time" "$memtally" faults "$pid" --for 30s \
                --unwind "$unwind" --sample "$sample" --format json > "$dir/json" 2>/dev/null
            wait "$pid"
            figures=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["samples"], d["lost"])' "$dir/json")
            echo "$unwind/sample$sample $(cat "$dir/loop") $(cat "$dir/time") $figures"
        done
    done
done
