#!/usr/bin/env bash
# Checks that two builds of `diff` print byte for byte the same on every
# snapshot pair made from the recorded /proc trees of the repository and
# ../shared, and on generated trees (bench/scale/gen_proc.py: vanished
# and grown regions, many processes, many mappings), in every format,
# each way round, and with the earlier file on a pipe.
#   bench/diff/same_output.sh BASE_BINARY NEW_BINARY
set -euo pipefail
base=$(readlink -f "$1"); new=$(readlink -f "$2")
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
snaps=()
for root in "$repo"/testdata/fixtures/linux/*/proc "$repo"/testdata/fixtures/linux-variants/*/proc \
            "$repo"/testdata/fixtures/cgroup-v1-root "$repo"/../shared/fixtures/linux/*/proc; do
  [[ -d $root ]] || continue
  name=$(echo "$root" | tr '/' '_')
  "$new" snapshot --proc-root "$root" -o "$work/$name.json" 2>/dev/null && snaps+=("$work/$name.json")
done
python3 "$repo/bench/scale/gen_proc.py" "$work/ga" --procs 30 --maps 3000 >/dev/null
python3 "$repo/bench/scale/gen_proc.py" "$work/gb" --procs 32 --maps 2990 --vary 7 >/dev/null
for g in ga gb; do "$new" snapshot --proc-root "$work/$g" -o "$work/$g.json"; snaps+=("$work/$g.json"); done
n=0; bad=0
for a in "${snaps[@]}"; do
  for b in "${snaps[@]}"; do
    for fmt in table json csv; do
      for min in "" "--min-delta 0"; do
        # shellcheck disable=SC2086
        eb=$("$base" diff "$a" "$b" --format $fmt $min 2>&1; echo "rc=$?") || true
        # shellcheck disable=SC2086
        en=$("$new" diff "$a" "$b" --format $fmt $min 2>&1; echo "rc=$?") || true
        n=$((n + 1))
        if [[ $eb != "$en" ]]; then bad=$((bad + 1)); echo "DIFFERS: diff $a $b --format $fmt $min"; fi
      done
    done
    # The earlier one on a pipe (kept whole, never read again).
    eb=$("$base" diff <(cat "$a") "$b" --format json 2>&1; echo "rc=$?") || true
    en=$("$new" diff <(cat "$a") "$b" --format json 2>&1; echo "rc=$?") || true
    n=$((n + 1)); [[ $eb == "$en" ]] || { bad=$((bad + 1)); echo "DIFFERS (pipe): $a $b"; }
  done
done
echo "${#snaps[@]} snapshots, $n runs compared, $bad differ"
[[ $bad == 0 ]]
