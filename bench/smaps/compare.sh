#!/usr/bin/env bash
# Byte-for-byte comparison of two memtally binaries' `show` output on every
# recorded Linux tree (table, JSON, CSV, --regions, --classic, by path):
# a parser or renderer change that claims "same output" runs this first.
#
#   bench/smaps/compare.sh OLD NEW
#
# Exits 1 and names each command whose output (or exit status) differs.
set -uo pipefail
old=$1 new=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
roots=()
for d in "$repo"/testdata/fixtures/linux/*/proc "$repo"/../shared/fixtures/linux/*/proc; do
    [[ -d $d ]] && roots+=("$d")
done
variants=(
    ""
    "--format json"
    "--format csv"
    "--regions"
    "--regions --format csv"
    "--regions --format json"
    "--classic"
    "--by path"
)
differ=0 compared=0
for root in "${roots[@]}"; do
    for pid in $(ls "$root" | grep -E '^[0-9]+$'); do
        for v in "${variants[@]}"; do
            # shellcheck disable=SC2086
            a=$("$old" show "$pid" --proc-root "$root" $v 2>&1; echo "rc=$?")
            # shellcheck disable=SC2086
            b=$("$new" show "$pid" --proc-root "$root" $v 2>&1; echo "rc=$?")
            compared=$((compared + 1))
            if [[ $a != "$b" ]]; then
                echo "DIFFERS: show $pid --proc-root $root $v"
                differ=1
            fi
        done
    done
done
echo "$compared outputs compared"
exit $differ
