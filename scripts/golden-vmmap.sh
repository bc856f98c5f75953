#!/usr/bin/env bash
# Regenerates testdata/golden/vmmap/: the seed tool's stdout on every vmmap
# fixture (the repo's own, and the published ones in ../shared), with its
# default --types and with --types '' (every type). memtally-cli/tests/cli/vmmap_parity.rs
# checks that `memtally vmmap F --seed-view` prints the same bytes.
#
#   scripts/golden-vmmap.sh            # from the crate root
set -euo pipefail
cd "$(dirname "$0")/.."
seed=../shared/seeds/vmmap_seed.py
out=testdata/golden/vmmap
[ -f "$seed" ] || { echo "golden-vmmap: $seed not found" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.out
run() { # name file [types...]
    local name=$1 file=$2; shift 2
    # The seed's stderr (its "No active regions" note) is not part of the golden data.
    if ! python3 "$seed" --file "$file" "$@" >"$out/$name" 2>/dev/null; then
        echo "golden-vmmap: the seed failed on $file $*" >&2
        exit 1
    fi
}
for f in testdata/fixtures/vmmap/*.txt ../shared/fixtures/vmmap/[0-9]*.txt; do
    [ -e "$f" ] || continue
    case $f in ../shared/*) prefix=shared_ ;; *) prefix=own_ ;; esac
    b=$prefix$(basename "$f" .txt)
    run "$b.default.out" "$f"
    run "$b.all.out" "$f" --types ''
done
ls "$out" | wc -l | xargs echo "golden-vmmap: files in $out:"
