#!/usr/bin/env bash
# Runs every cargo-fuzz target for a set time (default 600 s each), one
# after another, seeding each corpus from the repo's fixtures. Crashers
# land in fuzz/artifacts/TARGET/; turn each into a test case in
# memtally-core/tests/library/ (the targets use the library only).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Built with overflow checks and debug assertions (-a, and the release
# profile of fuzz/Cargo.toml): a wrapping sum is a crash. The quick form,
# every target's body over the seeds and the crashers kept in
# fuzz/regressions/TARGET/, runs in every `cargo test`
# (memtally-core/tests/library/fuzz_replay.rs); add a crasher there.
#
# cargo-fuzz needs nightly features; RUSTC_BOOTSTRAP=1 lets the stable
# toolchain build them. Install once: cargo install cargo-fuzz --locked
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-600}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(smaps vmmap fdinfo status stat fd_targets snapshot report_page snapshot_file)
cd "$repo/fuzz"
seed() { # target, files...
    local dir=corpus/$1; shift
    mkdir -p "$dir"
    for f in "$@"; do [[ -f $f ]] && cp "$f" "$dir/seed$(echo "$f" | tr '/' '_')"; done
}
seed smaps ../testdata/fixtures/linux/*/proc/*/smaps ../testdata/fixtures/linux/*/proc/*/smaps_rollup ../testdata/fixtures/linux/*/proc/*/maps
seed vmmap ../testdata/fixtures/vmmap/* ../../shared/fixtures/vmmap/*.txt
seed fdinfo ../testdata/fixtures/gpu/machine/*/fdinfo/*
seed status ../testdata/fixtures/linux*/*/proc/*/status
seed stat ../testdata/fixtures/linux*/*/proc/*/stat
seed fd_targets ../testdata/fixtures/gpu/machine/*/fd_targets
seed report_page ../testdata/snapshots/format1/report-a.html
seed snapshot_file ../testdata/snapshots/format1/{a.json,b.json,report-a.html} ../testdata/fixtures/vmmap/04_modern_gpu_purge.txt
# Snapshot seeds: memtally's own JSON of the recorded trees (when built).
mt=${MEMTALLY:-$repo/target/release/memtally}
if [[ -x $mt ]]; then
    mkdir -p corpus/snapshot
    for t in ../testdata/fixtures/linux/*/proc; do
        for p in $(ls "$t" | grep -E '^[0-9]+$'); do
            name=$(basename "$(dirname "$t")")
            "$mt" --proc-root "$t" snapshot "$p" -o "corpus/snapshot/seed-$name.json" || true
            "$mt" --proc-root "$t" show "$p" --format json > "corpus/snapshot/seed-show-$name.json" || true
        done
    done
    "$mt" vmmap ../testdata/fixtures/vmmap/04_modern_gpu_purge.txt --format json > corpus/snapshot/seed-vmmap.json || true
fi
for t in "${targets[@]}"; do
    echo "== $t for $secs s"
    RUSTC_BOOTSTRAP=1 cargo fuzz run -O -a "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -max_len=262144 2>&1 |
        tee "/tmp/fuzz-$t.log" | grep -E "^#[0-9]+.*(DONE|pulse)|ERROR|SUMMARY|panicked|Done" || true
    grep -E "^Done|stat::number_of_executed_units|exec/s" "/tmp/fuzz-$t.log" | tail -3 || true
done
