#!/usr/bin/env bash
# Checks a build that writes snapshot files of format 2 (JSON Lines)
# against one that writes format 1 (one object), on every /proc tree
# recorded in the repository and ../shared, and on generated trees
# (bench/scale/gen_proc.py: vanished and grown regions, many processes,
# many mappings):
#   bench/diff/same_output.sh BASE_BINARY NEW_BINARY
# - the writer: each tree's snapshot by NEW holds what BASE's does, but for
#   its moment (bench/diff/to_format1.py --same);
# - the readers: `diff` of every pair, in every format, with and without
#   `--min-delta 0`, and with the earlier file on a pipe, `report --input`
#   and `plot` of each, print byte for byte the same from NEW's files as
#   BASE prints from the same snapshots in format 1 (NEW's converted by
#   to_format1.py, so both hold one moment);
# - format 1 still read: NEW's `diff` of BASE's own files is BASE's;
# - the other documents (vmmap text and JSON, show JSON, report pages, each
#   by BASE): `diff` of every pair of one kind, `report --input` and `plot`
#   of each, print what BASE prints.
set -euo pipefail
base=$(readlink -f "$1"); new=$(readlink -f "$2")
repo=$(cd "$(dirname "$0")/../.." && pwd)
conv="$repo/bench/diff/to_format1.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/1" "$work/2" "$work/c"
names=(); bad=0; n=0
python3 "$repo/bench/scale/gen_proc.py" "$work/ga" --procs 30 --maps 3000 >/dev/null
python3 "$repo/bench/scale/gen_proc.py" "$work/gb" --procs 32 --maps 2990 --vary 7 >/dev/null
for root in "$repo"/testdata/fixtures/linux/*/proc "$repo"/testdata/fixtures/linux-variants/*/proc \
            "$repo"/testdata/fixtures/cgroup-v1-root "$repo"/testdata/fixtures/gpu/machine \
            "$repo"/../shared/fixtures/linux/*/proc "$work/ga" "$work/gb"; do
  [[ -d $root ]] || continue
  name=$(echo "$root" | tr '/' '_').json
  "$base" snapshot --proc-root "$root" -o "$work/1/$name" 2>/dev/null || continue
  "$new" snapshot --proc-root "$root" -o "$work/2/$name"
  python3 "$conv" "$work/2/$name" > "$work/c/$name"
  n=$((n + 1))
  python3 "$conv" --same "$work/1/$name" "$work/2/$name" || { bad=$((bad + 1)); echo "DIFFERS (snapshot): $root"; }
  names+=("$name")
done
# Runs `BIN ARGS` in DIR (a page names its input as given); output and status.
out() { local dir=$1; shift; (cd "$dir" && "$@" 2>&1; echo "rc=$?") || true; }
same() {  # WHAT BASE_OUTPUT NEW_OUTPUT
  n=$((n + 1)); [[ $2 == "$3" ]] || { bad=$((bad + 1)); echo "DIFFERS: $1"; }
}
for a in "${names[@]}"; do
  for b in "${names[@]}"; do
    for fmt in table json csv; do
      for min in "" "--min-delta 0"; do
        # shellcheck disable=SC2086
        same "diff $a $b --format $fmt $min" "$(out "$work/c" "$base" diff "$a" "$b" --format $fmt $min)" \
             "$(out "$work/2" "$new" diff "$a" "$b" --format $fmt $min)"
        # shellcheck disable=SC2086
        same "format 1: diff $a $b --format $fmt $min" "$(out "$work/1" "$base" diff "$a" "$b" --format $fmt $min)" \
             "$(out "$work/1" "$new" diff "$a" "$b" --format $fmt $min)"
      done
    done
    # The earlier one on a pipe (kept whole, never read again).
    same "diff <(cat $a) $b" "$(cd "$work/c" && "$base" diff <(cat "$a") "$b" --format json 2>&1; echo "rc=$?")" \
         "$(cd "$work/2" && "$new" diff <(cat "$a") "$b" --format json 2>&1; echo "rc=$?")"
  done
  for dir in c 2; do
    bin=$base; [[ $dir == 2 ]] && bin=$new
    (cd "$work/$dir" && "$bin" report --input "$a" -o "$a.html" >/dev/null 2>&1 && "$bin" plot "$a" -o "$a.svg" >/dev/null 2>&1) || true
  done
  n=$((n + 2))
  cmp -s "$work/c/$a.html" "$work/2/$a.html" || { bad=$((bad + 1)); echo "DIFFERS: report --input $a"; }
  cmp -s "$work/c/$a.svg" "$work/2/$a.svg" || { bad=$((bad + 1)); echo "DIFFERS: plot $a"; }
done
# The other documents diff, report and plot read (each by BASE): the
# saved vmmap texts of ../shared and their `vmmap --format json`, `show
# --format json` of each recorded tree's first process, and a report page
# of each format-1 snapshot: every pair of one kind, in every format.
mkdir -p "$work/o"
for f in "$repo"/../shared/fixtures/vmmap/*.txt; do
  [[ -f $f ]] || continue
  t=$(basename "$f" .txt); cp "$f" "$work/o/$t.txt"
  "$base" vmmap "$f" --format json > "$work/o/$t.vmmap.json" 2>/dev/null || rm -f "$work/o/$t.vmmap.json"
done
for root in "$repo"/testdata/fixtures/linux/*/proc; do
  pid=$(cd "$root" && ls -d [0-9]* | head -1)
  "$base" --proc-root "$root" show "$pid" --format json > "$work/o/$(basename "$(dirname "$root")").show.json" 2>/dev/null || true
done
for a in "${names[@]:0:4}"; do (cd "$work/1" && "$base" report --input "$a" -o "$work/o/$a.html" >/dev/null 2>&1) || true; done
for kind in "*.txt *.vmmap.json" "*.show.json" "*.html"; do
  # shellcheck disable=SC2086
  docs=($(cd "$work/o" && ls $kind 2>/dev/null))
  for a in "${docs[@]}"; do
    for b in "${docs[@]}"; do
      for fmt in table json csv; do
        same "diff $a $b --format $fmt" "$(out "$work/o" "$base" diff "$a" "$b" --format $fmt --min-delta 0)" \
             "$(out "$work/o" "$new" diff "$a" "$b" --format $fmt --min-delta 0)"
      done
    done
    for bin in base new; do
      b=$base; [[ $bin == new ]] && b=$new
      (cd "$work/o" && "$b" report --input "$a" -o "$a.$bin.page" >/dev/null 2>&1 && "$b" plot "$a" -o "$a.$bin.svg" >/dev/null 2>&1) || true
    done
    for what in page svg; do
      x="$work/o/$a.base.$what" y="$work/o/$a.new.$what"
      # Refused by both (a page has no plot): the same.
      [[ -f $x || -f $y ]] || continue
      n=$((n + 1)); cmp -s "$x" "$y" || { bad=$((bad + 1)); echo "DIFFERS: $what of $a"; }
    done
  done
done
others=$(cd "$work/o" && ls *.txt *.json *.html 2>/dev/null | wc -l)
echo "${#names[@]} snapshots, $others other documents, $n checks, $bad differ"
[[ $bad == 0 ]]
