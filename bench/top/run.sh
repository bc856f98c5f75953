#!/usr/bin/env bash
# memtally top against its floor and its peers, on a many-process workload
# this script starts (and kills) itself.
#
#   bench/top/run.sh            # 300 sleepers + 4 bigger processes
#   SLEEPERS=1000 RUNS=20 bench/top/run.sh
#   RT=1 bench/top/run.sh       # hyperfine and what it runs under SCHED_FIFO
#
# RT=1 is for a machine shared with other work (builds): every measured
# command then preempts it, so the wall-clock figures are those of a quiet
# machine. The kernel still keeps 5 % of each second for everything else
# (sched_rt_runtime_us), and the whole run takes about a minute.
#
# Needs: cargo, hyperfine, python3, smem (Debian package `smem`) and
# ps_mem (`pip install ps_mem`). Run as root, so that every process is
# readable by every tool (smem and ps_mem read /proc/PID/smaps of all).
# Prints hyperfine's table and the ratios; keeps the exports in $OUT.
set -euo pipefail

SLEEPERS=${SLEEPERS:-300}
BIG=${BIG:-4}
RUNS=${RUNS:-30}
RT=${RT:-0}
WARMUP=${WARMUP:-3}
LIFETIME=${LIFETIME:-600}   # the workload dies on its own after this many seconds
OUT=${OUT:-$(mktemp -d /tmp/memtally-bench-top.XXXXXX)}
here=$(cd "$(dirname "$0")/../.." && pwd)

for tool in cargo hyperfine python3 smem; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 2; }
done
# The real ps_mem script, not a pyenv shim (a shim adds a shell to every run).
PS_MEM=$(pyenv which ps_mem 2>/dev/null || command -v ps_mem || true)
[ -n "$PS_MEM" ] || { echo "run.sh: ps_mem not found (pip install ps_mem)" >&2; exit 2; }

# A private copy of the release binary, so a rebuild in the tree during
# the run cannot change what is measured.
(cd "$here" && cargo build --release --quiet)
cp "${CARGO_TARGET_DIR:-$here/target}/release/memtally" "$OUT/memtally"
MT="$OUT/memtally"

workload=()
cleanup() {
    if [ ${#workload[@]} -gt 0 ]; then
        kill "${workload[@]}" 2>/dev/null || true
        wait "${workload[@]}" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$SLEEPERS"); do
    sleep "$LIFETIME" &
    workload+=($!)
done
# A few bigger processes: a Python heap of 64 MiB touched, plus the
# interpreter's many library mappings (more lines per smaps for the peers).
for _ in $(seq "$BIG"); do
    python3 -c "import time; b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep($LIFETIME)" &
    workload+=($!)
done

# Wait until every workload process has exec'd (comm is no longer bash's).
for pid in "${workload[@]}"; do
    for _ in $(seq 200); do
        comm=$(cat "/proc/$pid/comm" 2>/dev/null || echo gone)
        case "$comm" in sleep|python3|gone) break ;; esac
        sleep 0.01
    done
done
sleep 1   # let the python heaps be touched

nproc_=$(nproc)
kernel=$(uname -r)
procs=$(ls -d /proc/[0-9]* | wc -l)
user_procs=$("$MT" top --all --format csv | tail -n +2 | wc -l)
echo "machine: nproc $nproc_, kernel $kernel; $procs /proc entries, $user_procs user processes (workload ${#workload[@]}); load before: $(cut -d' ' -f1-3 /proc/loadavg); RT=$RT" | tee "$OUT/machine.txt"

# Every command runs under sh (hyperfine subtracts the shell's own start-up),
# so the floor can use the shell's glob. cat fails when a process exits
# between the glob and its read; that is no error here, hence `|| true`.
prio=()
[ "$RT" = 1 ] && prio=(chrt --fifo 10)
"${prio[@]}" hyperfine --shell=sh --warmup "$WARMUP" --runs "$RUNS" \
    --export-json "$OUT/top.json" --export-markdown "$OUT/top.md" \
    -n "memtally top --all" "$MT top --all >/dev/null" \
    -n "memtally top --format json --all" "$MT top --format json --all >/dev/null" \
    -n "cat all smaps_rollup" "cat /proc/[0-9]*/smaps_rollup >/dev/null 2>&1 || true" \
    -n "smem" "smem -c 'pid user command swap uss pss rss' >/dev/null" \
    -n "ps_mem -S" "$PS_MEM -S >/dev/null" \
    >"$OUT/hyperfine.txt" 2>&1 || { cat "$OUT/hyperfine.txt" >&2; exit 1; }

cat "$OUT/top.md"
python3 - "$OUT/top.json" <<'PY' | tee "$OUT/ratios.txt"
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
def ms(name, stat="mean"): return r[name][stat] * 1e3
for stat in ("mean", "min"):
    top, js = ms("memtally top --all", stat), ms("memtally top --format json --all", stat)
    cat, smem, psmem = ms("cat all smaps_rollup", stat), ms("smem", stat), ms("ps_mem -S", stat)
    print(f"by {stat}: memtally top --all {top:.1f} ms, json {js:.1f} ms, cat {cat:.1f} ms, smem {smem:.1f} ms, ps_mem {psmem:.1f} ms")
    print(f"  memtally top --all / cat floor        : {top / cat:5.2f}x  (target <= 1.3)")
    print(f"  memtally top --format json / cat floor : {js / cat:5.2f}x")
    print(f"  smem / memtally top --all              : {smem / top:5.1f}x  (target >= 10)")
    print(f"  ps_mem -S / memtally top --all         : {psmem / top:5.1f}x  (target >= 10)")
cpu = {n: (x["user"] + x["system"]) * 1e3 for n, x in r.items()}
print("CPU time (user + system, mean; barely moved by other load): "
      + ", ".join(f"{n} {v:.1f} ms" for n, v in cpu.items()))
print(f"  memtally top --all / cat floor, CPU    : {cpu['memtally top --all'] / cpu['cat all smaps_rollup']:5.2f}x")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "exports: $OUT"
