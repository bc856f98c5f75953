#!/usr/bin/env bash
# What `export --pages` adds to a scrape: paired, interleaved runs
# (bench/pairs.py, CPU = user + sys) of `export` without it (the floor),
# with it under the default guard, and with it unguarded
# (`--read-budget 1h`), beside a workload that wrote GIB GiB (which the
# default guard, 50 ms at 80 ms per GiB, leaves unread above 640 MiB).
#
#   bench/serve/pages.sh                         # 1 GiB, 10 pairs
#   GIB=2 PAIRS=20 MT=target/release/memtally bench/serve/pages.sh
#
# Needs root (the frames are root's), cc, python3.
set -euo pipefail

GIB=${GIB:-1}
PAIRS=${PAIRS:-10}
here=$(cd "$(dirname "$0")/../.." && pwd)
MT=${MT:-$here/target/release/memtally}
[ "$(id -u)" = 0 ] || { echo "pages.sh: run as root" >&2; exit 2; }
[ -x "$MT" ] || { echo "pages.sh: build it first: cargo build --release -p memtally-cli" >&2; exit 2; }
out=$(mktemp -d /tmp/memtally-bench-serve-pages.XXXXXX)
child=
cleanup() { [ -n "$child" ] && kill "$child" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cc -O1 -o "$out/touch" "$here/bench/pages/touch.c"
coproc TOUCH { exec "$out/touch" $((GIB << 30)); }
child=$TOUCH_PID
read -r ready <&"${TOUCH[0]}"
[ "$ready" = ready ] || { echo "pages.sh: the workload did not start" >&2; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/bench/pairs.py" "$PAIRS" \
    "export=$MT export --top 50" \
    "export --pages=$MT export --top 50 --pages" \
    "export --pages --read-budget 1h=$MT export --top 50 --pages --read-budget 1h"
