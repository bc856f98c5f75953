#!/usr/bin/env bash
# Peak memory of every reader of a document, at inputs near the bound a
# document may have (256 MiB; docs/robustness.md "Memory bounded by the
# work"): each kind of document at about MB megabytes (default 240), and
# the same kind at a tenth of that, read by every command that takes it.
#   bench/bounds/run.sh BINARY [MB]
# A line per run: the command, the input's size, peak RSS (GNU time's %M)
# at both sizes, and the exit status. A reader whose peak follows the
# input's size shows it here; one bounded by the work does not.
# Inputs: vmmap text (bench/vmmap/gen.py, and a type on every line), the
# JSON of `vmmap`, a snapshot file of one process of many mappings
# (bench/scale/gen_proc.py), that snapshot as one object (format 1:
# bench/diff/to_format1.py), `show`'s JSON, and a report page embedding
# it whole. Each `diff` compares two such documents that differ.
set -euo pipefail
bin=$(readlink -f "$1"); mb=${2:-240}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Makes the inputs of one size, named $work/$tag.*; bytes in the names' order.
inputs() {
  local tag=$1 mb=$2 d="$work/$1"
  mkdir -p "$d"
  # vmmap text: about 120 bytes a line (225 with a type each); its JSON 240.
  python3 "$repo/bench/vmmap/gen.py" --lines $((mb * 8000)) --seed 1 "$d/a.txt"
  python3 "$repo/bench/vmmap/gen.py" --lines $((mb * 8000)) --seed 2 "$d/b.txt"
  python3 "$repo/bench/vmmap/gen.py" --lines $((mb * 4300)) --type-each-line "$d/types-a.txt"
  python3 "$repo/bench/vmmap/gen.py" --lines $((mb * 4300)) --type-each-line --seed 2 "$d/types-b.txt"
  python3 "$repo/bench/vmmap/gen.py" --lines $((mb * 4000)) --seed 1 "$d/j.txt"
  python3 "$repo/bench/vmmap/gen.py" --lines $((mb * 4000)) --seed 2 "$d/k.txt"
  "$bin" vmmap "$d/j.txt" --format json > "$d/a.vmmap.json"
  "$bin" vmmap "$d/k.txt" --format json > "$d/b.vmmap.json"
  rm "$d/j.txt" "$d/k.txt"
  # One process of many mappings: about 600 bytes a mapping in `show` JSON.
  python3 "$repo/bench/scale/gen_proc.py" "$d/pa" --procs 1 --maps $((mb * 1650)) >/dev/null
  python3 "$repo/bench/scale/gen_proc.py" "$d/pb" --procs 1 --maps $((mb * 1650)) --vary 1 >/dev/null
  local pid
  pid=$(ls "$d/pa" | grep -m1 '^[0-9]')
  for s in a b; do
    "$bin" snapshot --proc-root "$d/p$s" -o "$d/$s.jsonl"
    python3 "$repo/bench/diff/to_format1.py" "$d/$s.jsonl" > "$d/$s.snap.json"
    "$bin" show --proc-root "$d/p$s" "$pid" --format json > "$d/$s.show.json"
    "$bin" report --input "$d/$s.jsonl" --max-size 250M -o "$d/$s.html" 2>/dev/null
  done
  rm -rf "$d/pa" "$d/pb"
}

inputs small $((mb / 10))
inputs large "$mb"
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); load $(cut -d' ' -f1-3 /proc/loadavg); $("$bin" --version)"
printf '%-32s %-12s %12s %12s %14s %14s %6s\n' command input "small bytes" "large bytes" "small peak KiB" "large peak KiB" exit

# Peak KiB and exit status of one run: "KIB STATUS".
peak() {
  local status=0
  /usr/bin/time -f %M -o "$work/time" "$@" > /dev/null 2> "$work/err" || status=$?
  echo "$(tail -1 "$work/time") $status"
}

for kind in txt types vmmap.json jsonl snap.json show.json html; do
  case $kind in
    txt) a=a.txt b=b.txt ;;
    types) a=types-a.txt b=types-b.txt ;;
    *) a=a.$kind b=b.$kind ;;
  esac
  for cmd in vmmap diff report plot; do
    case $cmd:$kind in
      vmmap:txt | vmmap:types) ;;
      vmmap:*) continue ;;
    esac
    run() {
      local d="$work/$1"
      case $cmd in
        vmmap) peak "$bin" vmmap "$d/$a" --format json ;;
        diff) peak "$bin" diff "$d/$a" "$d/$b" ;;
        report) peak "$bin" report --input "$d/$a" -o "$work/out.html" ;;
        plot) peak "$bin" plot "$d/$a" -o "$work/out.svg" ;;
      esac
    }
    read -r small_kib small_rc < <(run small)
    read -r large_kib large_rc < <(run large)
    printf '%-32s %-12s %12s %12s %14s %14s %6s\n' "$cmd" "$kind" \
      "$(stat -c %s "$work/small/$a")" "$(stat -c %s "$work/large/$a")" \
      "$small_kib" "$large_kib" "$small_rc/$large_rc"
  done
done
