#!/usr/bin/env bash
# memtally's page-level reads against their floor, per resident GiB, and
# `top --exact` over the whole machine against plain `top`.
#
#   bench/pages/run.sh              # a 1 GiB workload, 10 runs each
#   GIB=4 RUNS=20 bench/pages/run.sh
#   MT=target/release/memtally bench/pages/run.sh # a binary already built
#   RT=1 bench/pages/run.sh         # every measured command under SCHED_FIFO
#   THP=1 bench/pages/run.sh        # the workload in transparent huge pages
#
# RT=1 is for a machine shared with other work (builds), as in
# bench/top/run.sh: each measured command then preempts it, so the figures
# are those of a quiet machine.
#
# The floor reads the same bytes with dd: the workload's pagemap entries
# (8 bytes per 4 KiB page, the one mapping it wrote), and as many bytes of
# /proc/kpagecount and /proc/kpageflags, sequentially from the workload's
# lowest frame. memtally reads scattered frames in runs, so the floor is a
# little below what any reader of the same frames can do.
#
# Needs root (the frames are root's), cc, python3. Prints a Markdown table;
# keeps the raw timings in $OUT.
set -euo pipefail

GIB=${GIB:-1}
RUNS=${RUNS:-10}
RT=${RT:-0}
THP=${THP:-0}
OUT=${OUT:-$(mktemp -d /tmp/memtally-bench-pages.XXXXXX)}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run.sh: run as root (kpagecount and kpageflags are root's)" >&2; exit 2; }

if [ -z "${MT:-}" ]; then
    (cd "$here" && cargo build --release --quiet -p memtally-cli)
    cp "${CARGO_TARGET_DIR:-$here/target}/release/memtally" "$OUT/memtally"
    MT="$OUT/memtally"
fi
cc -O1 -o "$OUT/touch" "$here/bench/pages/touch.c"

child=
cleanup() { [ -n "$child" ] && kill "$child" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
coproc TOUCH { exec "$OUT/touch" $((GIB << 30)) $([ "$THP" = 1 ] && echo thp); }
child=$TOUCH_PID
read -r ready <&"${TOUCH[0]}"
[ "$ready" = ready ] || { echo "run.sh: the workload did not start" >&2; exit 1; }

# The workload's one big mapping, and its first frame.
range=$(python3 - "$child" $((GIB << 30)) <<'PY'
import sys
pid, want = int(sys.argv[1]), int(sys.argv[2])
for line in open(f"/proc/{pid}/maps"):
    s, e = (int(x, 16) for x in line.split()[0].split("-"))
    if e - s >= want:
        print(s, e)
        break
PY
)
read -r start end <<<"$range"
pages=$(( (end - start) / 4096 ))
first_pfn=$(python3 - "$child" "$start" <<'PY'
import struct, sys
pid, start = int(sys.argv[1]), int(sys.argv[2])
with open(f"/proc/{pid}/pagemap", "rb") as f:
    f.seek(start // 4096 * 8)
    pfns = [e & ((1 << 55) - 1) for (e,) in struct.iter_unpack("<Q", f.read(8 * 4096)) if e >> 63]
print(min(pfns))
PY
)
echo "machine: nproc $(nproc), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); workload $GIB GiB ($pages pages), pid $child; $(ls -d /proc/[0-9]* | wc -l) /proc entries; RT=$RT THP=$THP ($(grep AnonHugePages /proc/$child/smaps_rollup | tr -s ' '))" | tee "$OUT/machine.txt"

# name, then the command line (run by bash -c, stdout discarded).
benches=(
    "floor: dd pagemap + kpagecount + kpageflags of the same bytes|dd if=/proc/$child/pagemap bs=1M iflag=skip_bytes,count_bytes skip=$((start / 4096 * 8)) count=$((pages * 8)) status=none of=/dev/null && dd if=/proc/kpagecount bs=1M iflag=skip_bytes,count_bytes skip=$((first_pfn * 8)) count=$((pages * 8)) status=none of=/dev/null && dd if=/proc/kpageflags bs=1M iflag=skip_bytes,count_bytes skip=$((first_pfn * 8)) count=$((pages * 8)) status=none of=/dev/null"
    "memtally show PID --pages (page states)|$MT show $child --pages --format json"
    "memtally top --pid PID --exact (exclusive)|$MT top --pid $child --exact --format json"
    "memtally show PID (smaps only, for scale)|$MT show $child --format json"
    "memtally top (whole machine)|$MT top --all --format json"
    "memtally top --exact (whole machine)|$MT top --all --exact --format json"
)
python3 - "$RUNS" "$GIB" "$OUT" "$RT" "${benches[@]}" <<'PY'
import statistics, subprocess, sys, time
runs, gib, out, rt = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
prefix = ["chrt", "-f", "50"] if rt else []
print(f"\n| command | median ms | min ms | median ms per resident GiB of the workload |")
print("| --- | ---: | ---: | ---: |")
with open(f"{out}/timings.txt", "w") as raw:
    for spec in sys.argv[5:]:
        name, cmd = spec.split("|", 1)
        times = []
        for _ in range(runs + 1):
            t = time.perf_counter()
            subprocess.run(prefix + ["bash", "-c", cmd], stdout=subprocess.DEVNULL, check=True)
            times.append((time.perf_counter() - t) * 1000)
        times = times[1:]  # the first warms the caches
        raw.write(f"{name}: {' '.join(f'{x:.1f}' for x in times)}\n")
        med = statistics.median(times)
        per = f"{med / gib:.0f}" if "whole machine" not in name else ""
        print(f"| {name} | {med:.0f} | {min(times):.0f} | {per} |")
PY
echo
echo "raw timings: $OUT/timings.txt"
