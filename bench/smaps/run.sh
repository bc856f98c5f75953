#!/usr/bin/env bash
# smaps benchmark: how long `memtally show PID --format json` takes on a
# process with 20,000 mappings, beside the kernel's own cost (cat smaps),
# pmap -X, the seed Perl script and the procfs crate's smaps parser.
#
#   bench/smaps/run.sh [RUNS]          (default 20 runs per command)
#
# Environment:
#   MAPPINGS=N      mappings in the test process (default 20000)
#   MEMTALLY=PATH   binary to measure (default target/release/memtally)
#   PROCFS=PATH     procfs peer (default target/release/examples/procfs_smaps)
#   NO_BUILD=1      do not run cargo build first
#   OUT=DIR         where results go (default bench/smaps/results)
#
# Writes OUT/hyperfine.md and OUT/hyperfine.json and prints the ratios the
# issue sets targets for: memtally <= 1.2x cat, pmap -X >= 10x memtally.
# Wall-clock ratios mean something only on an otherwise idle machine (the
# load average is printed first); the CPU columns are less sensitive.
# Needs gcc, hyperfine, pmap (procps), perl, python3.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-20}
mappings=${MAPPINGS:-20000}
memtally=${MEMTALLY:-$repo/target/release/memtally}
procfs=${PROCFS:-$repo/target/release/examples/procfs_smaps}
out=${OUT:-$repo/bench/smaps/results}
seed=$repo/../shared/seeds/mem_usage.pl

for tool in gcc hyperfine pmap perl python3; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
if [[ -z ${NO_BUILD:-} ]]; then
    (cd "$repo" && cargo build --release -p memtally-cli --bin memtally && cargo build --release -p memtally-core --example procfs_smaps)
fi

work=$(mktemp -d)
child=
cleanup() {
    [[ -n $child ]] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

gcc -O2 -o "$work/many_maps" "$repo/bench/smaps/many_maps.c"
"$work/many_maps" "$mappings" > "$work/ready" &
child=$!
for _ in $(seq 100); do [[ -s $work/ready ]] && break; sleep 0.05; done
read -r pid count < "$work/ready"
[[ $pid == "$child" ]] || { echo "many_maps did not start" >&2; exit 1; }
echo "pid $pid: $(wc -l < "/proc/$pid/maps") mappings, smaps $(wc -c < "/proc/$pid/smaps") bytes"
echo "$(nproc) CPUs, kernel $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Sanity: each peer reads this process.
"$memtally" show "$pid" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("memtally regions:", len(d["regions"]))'
"$procfs" "$pid" | python3 -c 'import json,sys; print("procfs regions:", json.load(sys.stdin)["regions"])'

cmds=(
    -n cat "cat /proc/$pid/smaps"
    -n memtally "$memtally show $pid --format json"
    -n "pmap -X" "pmap -X $pid"
    -n procfs "$procfs $pid"
)
if [[ -r $seed ]]; then
    cmds+=(-n "mem_usage.pl" "perl $seed $pid")
else
    echo "(seed $seed absent: mem_usage.pl not measured)"
fi

mkdir -p "$out"
hyperfine -N --warmup 3 --runs "$runs" \
    --export-markdown "$out/hyperfine.md" --export-json "$out/hyperfine.json" \
    "${cmds[@]}"

python3 - "$out/hyperfine.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
mean = lambda n: r[n]["mean"] * 1000
cat, mt = mean("cat"), mean("memtally")
print()
for n in r:
    cpu = (r[n]["user"] + r[n]["system"]) * 1000
    print(f"{n:14} {mean(n):8.1f} ms  (median {r[n]['median']*1000:.1f}, min {r[n]['min']*1000:.1f},"
          f" {mean(n)/cat:5.2f}x cat; CPU user+sys {cpu:.1f} ms)")
print(f"\nmemtally / cat     = {mt/cat:.2f}  (target <= 1.2)")
print(f"pmap -X / memtally = {mean('pmap -X')/mt:.2f}  (target >= 10)")
print(f"procfs / memtally  = {mean('procfs')/mt:.2f}")
EOF
