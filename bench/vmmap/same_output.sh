#!/usr/bin/env bash
# Whether two memtally binaries print the same bytes (stdout and exit
# status) for `memtally vmmap` over every recorded vmmap report and two
# generated 1,000,000-line reports (as is, and with every 1,000th region
# line unreadable), in each output the vmmap benchmark and its users
# read: the table, --pow2, --format json, --types IOSurface, --format csv,
# --page-size 1, --seed-view, --regions, --strict, --by (table and JSON).
#   bench/vmmap/same_output.sh BASE_BINARY NEW_BINARY [LINES]
# Exits 1 at the first difference (naming the file and the options).
set -euo pipefail
base=$(readlink -f "$1"); new=$(readlink -f "$2"); lines=${3:-1000000}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$repo/bench/vmmap/gen.py" --lines "$lines" "$work/gen.txt"
python3 "$repo/bench/vmmap/gen.py" --lines "$lines" --odd-every 1000 "$work/gen-odd.txt"
files=("$work/gen.txt" "$work/gen-odd.txt")
while IFS= read -r f; do files+=("$f"); done < <(
  find "$repo/testdata" "$repo/../shared/fixtures/vmmap" -path '*vmmap*' -name '*.txt' -type f \
    ! -name SOURCES.md 2>/dev/null | sort)
variants=("" "--pow2" "--format json" "--types IOSurface" "--format csv" "--page-size 1"
          "--seed-view" "--regions" "--strict" "--format json --types IOSurface --pow2"
          "--format json --by detail" "--by share-mode")
checked=0
for f in "${files[@]}"; do
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2086 # the variant is a list of words
    b=0; "$base" vmmap "$f" $v >"$work/base.out" 2>"$work/base.err" || b=$?
    # shellcheck disable=SC2086
    n=0; "$new" vmmap "$f" $v >"$work/new.out" 2>"$work/new.err" || n=$?
    if [[ $b != "$n" ]] || ! cmp -s "$work/base.out" "$work/new.out" \
       || ! cmp -s "$work/base.err" "$work/new.err"; then
      echo "DIFFERENT: $f $v (exit $b vs $n)" >&2
      diff <(head -c 100000 "$work/base.out") <(head -c 100000 "$work/new.out") | head -20 >&2 || true
      exit 1
    fi
    checked=$((checked + 1))
  done
done
echo "same output: $checked runs over ${#files[@]} files"
