#!/usr/bin/env bash
# `memtally vmmap` is one sequential, streaming reader: linear in time and
# flat in memory whatever the report's length. This measures it, for the
# table and `--format json`, on generated reports of 100,000 and 1,000,000
# region lines (bench/vmmap/gen.py, to $TMPDIR, removed at exit) and on the
# largest published report (../shared/fixtures/vmmap, 71 KB):
#   - user-space instructions a line (valgrind --tool=callgrind, the whole
#     run, start-up included): about the same at both sizes = linear;
#   - peak RSS (GNU time): about the same at both sizes = flat;
#   - on the published report, the whole run's wall time (median of 50).
# Needs valgrind, python3 and /usr/bin/time (Debian package `time`).
#   bench/vmmap/scale.sh BINARY [LINES...]     (default LINES: 100000 1000000)
set -euo pipefail
bin=$(readlink -f "$1"); shift
sizes=("$@")
[[ ${#sizes[@]} -eq 0 ]] && sizes=(100000 1000000)
repo=$(cd "$(dirname "$0")/../.." && pwd)
real=$repo/../shared/fixtures/vmmap/04_macos-10.13.3_vmmap-wide_fsnotifier_complete.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

instructions() { # FILE ARGS...: user-space instructions of the whole run
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin" vmmap "$@" \
    2>&1 >/dev/null | awk '/Collected/ {print $4}'
}
peak() { # FILE ARGS...: peak RSS in MiB
  /usr/bin/time -f %M "$bin" vmmap "$@" 2>&1 >/dev/null | awk '{printf "%.1f", $1 / 1024}'
}

printf '%-28s %-6s %16s %18s %14s\n' input output instructions 'a region line' 'peak RSS MiB'
for lines in "${sizes[@]}"; do
  f=$work/vmmap-$lines.txt
  python3 "$repo/bench/vmmap/gen.py" --lines "$lines" "$f"
  for out in table json; do
    args=("$f"); [[ $out == json ]] && args+=(--format json)
    n=$(instructions "${args[@]}")
    printf '%-28s %-6s %16s %18s %14s\n' "$lines lines, $(( $(stat -c %s "$f") / 1000000 )) MB" "$out" \
      "$n" "$(( n / lines ))" "$(peak "${args[@]}")"
  done
done
if [[ -f $real ]]; then
  lines=$(grep -c '\[' "$real" || true)
  for out in table json; do
    args=("$real"); [[ $out == json ]] && args+=(--format json)
    n=$(instructions "${args[@]}")
    ms=$(python3 - "$bin" "${args[@]}" <<'PY'
import statistics, subprocess, sys, time
runs = []
for _ in range(50):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "vmmap", *sys.argv[2:]], stdout=subprocess.DEVNULL, check=True)
    runs.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(runs):.2f}")
PY
)
    printf '%-28s %-6s %16s %18s %14s  wall %s ms (median of 50)\n' "published, 71 KB" "$out" "$n" \
      "$(( n / lines ))" "$(peak "${args[@]}")" "$ms"
  done
else
  echo "skipped the published report: $real is absent"
fi
