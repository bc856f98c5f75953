#!/usr/bin/env bash
# Records a live process's /proc files as a test fixture, with the seed
# Perl script's output beside them as golden data.
#
#   scripts/record-linux-fixture.sh NAME PID [MEMTALLY]
#
# writes testdata/fixtures/linux/NAME/proc/PID/{smaps,maps,smaps_rollup,...}
# (via `memtally capture`) and testdata/fixtures/linux/NAME/mem_usage_pl_output.txt
# (`perl ../shared/seeds/mem_usage.pl PID 2>/dev/null`, run at the same moment).
#
# A live process's mappings change; a recording is kept only when
#   - /proc/PID/maps read before the seed, between the seed and the capture,
#     and after the capture is byte-for-byte the same, and equals the
#     recorded maps (so the seed and the capture saw the same mappings), and
#   - the recorded smaps summed by an independent awk script equals the
#     recorded smaps_rollup for every page-counted field (the Pss family is
#     rounded per mapping in smaps, so it may only fall short by < 1 kB per
#     mapping), so smaps and smaps_rollup describe the same moment.
# Otherwise it retries (up to TRIES, default 50, times).
#
# MEMTALLY defaults to target/release/memtally (build it first). SEED
# defaults to ../shared/seeds/mem_usage.pl beside this repository.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: record-linux-fixture.sh NAME PID [MEMTALLY]}
pid=${2:?usage: record-linux-fixture.sh NAME PID [MEMTALLY]}
memtally=${3:-$here/target/release/memtally}
seed=${SEED:-$here/../shared/seeds/mem_usage.pl}
tries=${TRIES:-50}
dest=$here/testdata/fixtures/linux/$name

[[ -x $memtally ]] || { echo "no memtally binary at $memtally (cargo build --release)" >&2; exit 2; }
[[ -r $seed ]] || { echo "no seed script at $seed (set SEED=...)" >&2; exit 2; }
[[ -d /proc/$pid ]] || { echo "no process $pid" >&2; exit 2; }
[[ -e $dest ]] && { echo "$dest exists; recordings are never overwritten, pick a new NAME" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Sums smaps's "Key: N kB" lines and checks them against smaps_rollup.
rollup_matches() {
    awk '
        FNR == 1 { file++ }
        file == 1 && $2 ~ /^[0-9]+$/ && $3 == "kB" { n[$1]++; sum[$1] += $2 }
        file == 1 && $1 ~ /^[0-9a-f]+-[0-9a-f]+$/ { regions++ }
        file == 2 && $2 ~ /^[0-9]+$/ && $3 == "kB" {
            key = $1; want = $2; got = sum[key] + 0
            if (key ~ /^(Pss|SwapPss)/) {
                # rounded down per mapping in smaps, once in the rollup
                if (key in n && (got > want || want - got >= regions)) { bad = bad " " key "(smaps " got " rollup " want ")" }
            } else if (got != want) { bad = bad " " key "(smaps " got " rollup " want ")" }
        }
        END { if (bad != "") { print "smaps and smaps_rollup differ:" bad > "/dev/stderr"; exit 1 } }
    ' "$1/smaps" "$1/smaps_rollup"
}

for ((try = 1; try <= tries; try++)); do
    rm -rf "$work/capture"
    cat "/proc/$pid/maps" > "$work/maps.before"
    perl "$seed" "$pid" > "$work/seed.txt" 2>/dev/null
    cat "/proc/$pid/maps" > "$work/maps.middle"
    "$memtally" capture "$pid" -o "$work/capture" > /dev/null
    cat "/proc/$pid/maps" > "$work/maps.after"
    if cmp -s "$work/maps.before" "$work/maps.middle" \
        && cmp -s "$work/maps.middle" "$work/maps.after" \
        && cmp -s "$work/maps.after" "$work/capture/$pid/maps" \
        && rollup_matches "$work/capture/$pid"; then
        mkdir -p "$dest"
        mv "$work/capture" "$dest/proc"
        mv "$work/seed.txt" "$dest/mem_usage_pl_output.txt"
        echo "recorded pid $pid ($(cat "/proc/$pid/comm")) as $dest on try $try:" \
            "$(wc -l < "$dest/proc/$pid/maps") mappings"
        exit 0
    fi
    sleep 0.2
done
echo "pid $pid never held still for $tries tries; nothing recorded" >&2
exit 1
