#!/usr/bin/env bash
# memtally beyond this machine's process list (issue 25 item 2): `top`,
# `machine`, `snapshot`, `diff`, one `serve` scrape and the explorer's
# first screen and a key, on generated /proc trees (bench/scale/gen_proc.py)
# of 10,000 and 50,000 processes and on one process of 1,000,000
# mappings. Prints one markdown table: CPU (user + sys) and wall time,
# peak RSS, and the 50k : 10k ratio of each (linear is 5x).
#
#   bench/scale/run.sh BINARY
#
# env: SCALE_DIR (/tmp/memtally-scale) where the trees are generated, once
# (a stamp file holds the generator's arguments; 50,000 processes take
# about 1 GB of disk, mostly hard links; the 1M-mapping process about
# 0.9 GB); KEEP=1 keeps them afterwards. ONLY="top machine snapshot diff
# serve ui" (the default: all) runs only the named rows. RUNS (3): each command runs
# RUNS times in turn, the median of each figure is printed.
#
# The trees: `pN` are N copies of the recorded gst-launch process (155
# mappings each) for top, machine, serve and ui; `cN` and `cN-b` are N
# processes cut to their first 8 mappings (`--cut 3`; `-b`: 10 of them
# changed, `--vary 10`) for snapshot and diff, whose documents must stay
# under the 256 MiB a document may have (a snapshot of 50,000 whole
# copies is about 3.9 GB, of 8 mappings 313 MB); `m1m` is one process of 1,000,000 mappings.
set -euo pipefail
bin=$(readlink -f "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${SCALE_DIR:-/tmp/memtally-scale}
runs=${RUNS:-3}
mkdir -p "$dir"
work=$(mktemp -d)
sock="memtally-scale-$$"
serve_pid=
cleanup() {
  [[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null || true
  tmux -L "$sock" kill-server 2>/dev/null || true
  rm -rf "$work"
  if [[ -z ${KEEP:-} ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT

tree() { # NAME GENERATOR-ARGS...: the tree, generated unless it is there with these arguments
  local name=$1
  shift
  if [[ $(cat "$dir/$name.args" 2>/dev/null) != "$*" ]]; then
    python3 "$repo/bench/scale/gen_proc.py" "$dir/$name" "$@"
    echo "$*" > "$dir/$name.args"
  fi
}
only() { [[ " ${ONLY:-top machine snapshot diff serve ui} " == *" $1 "* ]]; }
# Only the trees the chosen rows read are generated.
if only top || only machine || only serve || only ui; then
  tree p10k --procs 10000
  tree p50k --procs 50000
fi
if only snapshot || only diff; then
  tree c10k --procs 10000 --cut 3
  tree c10k-b --procs 10000 --cut 3 --vary 10
  tree c50k --procs 50000 --cut 3
  tree c50k-b --procs 50000 --cut 3 --vary 10
fi
if ! [[ ${ONLY:-} == diff ]]; then tree m1m --procs 1 --maps 1000000; fi

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# timed KEY COMMAND...: runs COMMAND (output to /dev/null) RUNS times under
# GNU time; the medians go to $work/KEY as "cpu_ms wall_ms rss_mib".
timed() {
  local key=$1
  shift
  : > "$work/$key.runs"
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%U %S %e %M" -o "$work/t" "$@" > /dev/null 2> "$work/err" ||
      { echo "failed: $* ($(tail -1 "$work/err"))" >&2; echo "failed - -" > "$work/$key"; return 0; }
    awk '{ printf "%.1f %.1f %.1f\n", ($1 + $2) * 1000, $3 * 1000, $4 / 1024 }' "$work/t" >> "$work/$key.runs"
  done
  local c w m
  c=$(cut -d' ' -f1 "$work/$key.runs" | median)
  w=$(cut -d' ' -f2 "$work/$key.runs" | median)
  m=$(cut -d' ' -f3 "$work/$key.runs" | median)
  echo "$c $w $m" > "$work/$key"
}

ticks=$(getconf CLK_TCK)
cpu_ms() { # user + sys of a process so far, ms
  local s
  s=$(cat "/proc/$1/stat")
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  echo $(((${12} + ${13}) * 1000 / ticks))
}
hwm_mib() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
now_ms() { date +%s%3N; }
# until_ms LIMIT_MS COMMAND...: waits for COMMAND to succeed; fails past LIMIT_MS.
until_ms() {
  local limit=$1 t0
  shift
  t0=$(now_ms)
  until "$@"; do
    (($(now_ms) - t0 < limit)) || { echo "gave up after ${limit} ms: $*" >&2; return 1; }
    sleep 0.01
  done
}

# scrape KEY TREE: starts serve on TREE, scrapes /metrics once (a fresh
# scan), and records the server's CPU for that scrape, the scrape's wall
# time and the server's peak RSS. The median of RUNS servers.
scrape() {
  local key=$1 root=$2 port=$((20000 + RANDOM % 20000))
  : > "$work/$key.runs"
  for ((i = 0; i < runs; i++)); do
    "$bin" --proc-root "$root" serve --listen "127.0.0.1:$port" > /dev/null 2>&1 &
    serve_pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
    local c0 t0 t1 code
    c0=$(cpu_ms "$serve_pid")
    t0=$(now_ms)
    code=$(curl -s -o "$work/metrics" -w '%{http_code}' "http://127.0.0.1:$port/metrics")
    t1=$(now_ms)
    [[ $code == 200 ]] || echo "serve on $root: HTTP $code" >&2
    echo "$(($(cpu_ms "$serve_pid") - c0)) $((t1 - t0)) $(hwm_mib "$serve_pid")" >> "$work/$key.runs"
    kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
  done
  echo "$(cut -d' ' -f1 "$work/$key.runs" | median) $(cut -d' ' -f2 "$work/$key.runs" | median) $(cut -d' ' -f3 "$work/$key.runs" | median)" > "$work/$key"
}

# explore KEY TREE [SIZE]: `ui` on TREE in a detached tmux window (SIZE,
# default 200x50), driven as a user drives it: the time until the first
# screen (the machine) lists a process; Enter, and the time until the
# process list shows; then Down, and the time until the selection moves
# (the pane's attributes change); CPU to that point and peak RSS. Each
# screen is kept as $CAPTURES/KEY-SIZE-{machine,list,down}.txt (CAPTURES
# defaults to $SCALE_DIR/captures) to look at what a user would see.
explore() {
  local key=$1 root=$2 size=${3:-200x50}
  local cap=${CAPTURES:-$dir/captures}
  mkdir -p "$cap"
  : > "$work/$key.runs"
  listed() { tmux -L "$sock" capture-pane -p -t s | grep -q gst-launch; }
  on_list() { tmux -L "$sock" capture-pane -p -t s | head -1 | grep -q 'by process'; }
  moved() { [[ $(tmux -L "$sock" capture-pane -p -e -t s) != "$before" ]]; }
  give_up() { # STAGE: the row says "-", the screen so far is kept
    echo "explorer on $root ($size): no answer at $1" >&2
    tmux -L "$sock" capture-pane -p -t s > "$cap/$key-$size-stuck.txt" 2>/dev/null || true
    tmux -L "$sock" kill-server
    echo "- - - - -" > "$work/$key"
  }
  for ((i = 0; i < runs; i++)); do
    local t0 t1 t2 t3 t4 pid before
    t0=$(now_ms)
    tmux -L "$sock" -f /dev/null new-session -d -s s -x "${size%x*}" -y "${size#*x}" \
      env TERM=screen-256color LANG=C.UTF-8 "$bin" --proc-root "$root" ui
    pid=$(tmux -L "$sock" display-message -p -t s '#{pane_pid}')
    until_ms 300000 listed || { give_up "the first screen"; return 0; }
    t1=$(now_ms)
    tmux -L "$sock" capture-pane -p -t s > "$cap/$key-$size-machine.txt"
    tmux -L "$sock" send-keys -t s Enter
    t2=$(now_ms)
    until_ms 60000 on_list || { give_up "Enter (the process list)"; return 0; }
    until_ms 60000 listed || { give_up "Enter (a listed process)"; return 0; }
    t3=$(now_ms)
    tmux -L "$sock" capture-pane -p -t s > "$cap/$key-$size-list.txt"
    # With its attributes (-e): the selection moves by its highlight.
    before=$(tmux -L "$sock" capture-pane -p -e -t s)
    tmux -L "$sock" send-keys -t s Down
    t4=$(now_ms)
    until_ms 60000 moved || { give_up "Down"; return 0; }
    echo "$((t1 - t0)) $((t3 - t2)) $(($(now_ms) - t4)) $(cpu_ms "$pid") $(hwm_mib "$pid")" >> "$work/$key.runs"
    tmux -L "$sock" capture-pane -p -t s > "$cap/$key-$size-down.txt"
    tmux -L "$sock" kill-server
  done
  local f
  for f in 1 2 3 4 5; do cut -d' ' -f$f "$work/$key.runs" | median; done | paste -sd' ' > "$work/$key"
}

echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the start; binary $bin" >&2
# A command that fails (a document over the size limit, say) leaves its
# row saying so instead of ending the run.
for k in top10 top50 top1m machine10 machine50 machine1m snapshot10 snapshot50 snapshot1m diff10 diff50 serve10 serve50 serve1m; do
  echo "- - -" > "$work/$k"
done
for k in ui10 ui50 ui1m ui50s; do echo "- - - - -" > "$work/$k"; done
if only top; then
timed top10 "$bin" --proc-root "$dir/p10k" top --all --format json
timed top50 "$bin" --proc-root "$dir/p50k" top --all --format json
timed top1m "$bin" --proc-root "$dir/m1m" top --all --format json
fi
if only machine; then
timed machine10 "$bin" --proc-root "$dir/p10k" machine --format json
timed machine50 "$bin" --proc-root "$dir/p50k" machine --format json
timed machine1m "$bin" --proc-root "$dir/m1m" machine --format json
fi
if only snapshot || only diff; then
timed snapshot10 "$bin" --proc-root "$dir/c10k" snapshot -o "$work/a10.json"
timed snapshot50 "$bin" --proc-root "$dir/c50k" snapshot -o "$work/a50.json"
timed snapshot1m "$bin" --proc-root "$dir/m1m" snapshot -o /dev/null
"$bin" --proc-root "$dir/c10k-b" snapshot -o "$work/b10.json"
"$bin" --proc-root "$dir/c50k-b" snapshot -o "$work/b50.json"
fi
if only diff; then
timed diff10 "$bin" diff "$work/a10.json" "$work/b10.json" --format json
timed diff50 "$bin" diff "$work/a50.json" "$work/b50.json" --format json
fi
if only serve; then
scrape serve10 "$dir/p10k"
scrape serve50 "$dir/p50k"
scrape serve1m "$dir/m1m"
fi
if only ui; then
explore ui10 "$dir/p10k"
explore ui50 "$dir/p50k"
explore ui1m "$dir/m1m"
explore ui50s "$dir/p50k" 80x24
fi
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end; snapshots $(stat -c %s "$work/a10.json" 2>/dev/null) and $(stat -c %s "$work/a50.json" 2>/dev/null) bytes" >&2

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.2fx", b / a; else printf "-" }'; }
row() { # LABEL KEY10 KEY50 KEY1M: CPU, wall, RSS at each size, and the ratios
  local label=$1 a b m
  read -r -a a < "$work/$2"
  read -r -a b < "$work/$3"
  read -r -a m 2>/dev/null < "$work/$4" || m=(- - -)
  echo "| $label | ${a[0]} / ${a[1]} / ${a[2]} | ${b[0]} / ${b[1]} / ${b[2]} | $(ratio "${a[0]}" "${b[0]}") / $(ratio "${a[1]}" "${b[1]}") / $(ratio "${a[2]}" "${b[2]}") | ${m[0]} / ${m[1]} / ${m[2]} |"
}
echo
echo "| command | 10k: CPU ms / wall ms / peak MiB | 50k: CPU ms / wall ms / peak MiB | 50k : 10k | 1M mappings: CPU ms / wall ms / peak MiB |"
echo "| --- | ---: | ---: | ---: | ---: |"
row "\`top --all --format json\`" top10 top50 top1m
row "\`machine --format json\`" machine10 machine50 machine1m
row "\`snapshot --all\` (3 mappings a process)" snapshot10 snapshot50 snapshot1m
row "\`diff a b --format json\` (3 mappings a process)" diff10 diff50 none
row "\`serve\`, one scrape (server CPU / scrape wall / server peak)" serve10 serve50 serve1m
echo
read -r -a u10 < "$work/ui10"; read -r -a u50 < "$work/ui50"; read -r -a u1m < "$work/ui1m"; read -r -a u50s < "$work/ui50s"
echo "| explorer (\`ui\`), 200x50 | 10k | 50k | 50k : 10k | 1M mappings | 50k at 80x24 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
uirow() { # LABEL FIELD
  echo "| $1 | ${u10[$2]} | ${u50[$2]} | $(ratio "${u10[$2]}" "${u50[$2]}") | ${u1m[$2]} | ${u50s[$2]} |"
}
uirow "first screen (machine), ms" 0
uirow "Enter: process list shown, ms" 1
uirow "Down answered, ms" 2
uirow "CPU to then, ms" 3
uirow "peak RSS, MiB" 4
