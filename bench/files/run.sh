#!/usr/bin/env bash
# memtally files against its floor and smem -m, on the live machine,
# paired and interleaved (bench/pairs.py: CPU = user + sys, medians).
#
#   bench/files/run.sh            # 20 pairs
#   PAIRS=40 bench/files/run.sh
#
# The floor is the kernel generating every process's smaps (cat), which
# memtally files reads once; smem -m reads the same files and sums them in
# Python. Needs python3 and smem (Debian package `smem`); run as root so
# that every tool reads every process.
set -euo pipefail

PAIRS=${PAIRS:-20}
OUT=${OUT:-$(mktemp -d /tmp/memtally-bench-files.XXXXXX)}
here=$(cd "$(dirname "$0")/../.." && pwd)
for tool in cargo python3 smem; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 2; }
done
# A private copy of the release binary, so a rebuild meanwhile changes nothing.
(cd "$here" && cargo build --release --quiet -p memtally-cli)
cp "${CARGO_TARGET_DIR:-$here/target}/release/memtally" "$OUT/memtally"
MT="$OUT/memtally"

procs=$(ls -d /proc/[0-9]* | wc -l)
echo "machine: nproc $(nproc), kernel $(uname -r), $procs /proc entries; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# cat fails when a process exits between the glob and its read: no error here.
python3 "$here/bench/pairs.py" "$PAIRS" \
    "cat all smaps=sh -c 'cat /proc/[0-9]*/smaps >/dev/null 2>&1 || true'" \
    "memtally files=$MT files --all" \
    "memtally files --format json=$MT files --all --format json" \
    "smem -m=smem -m -c 'map pids pss uss swap'"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
