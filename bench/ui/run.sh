#!/usr/bin/env bash
# The cost of `memtally ui` itself at its default 1 s refresh on a machine
# with about PROCS processes, against htop and btop doing the same job:
# all run at once, each in a detached tmux window (200x50), for the same
# SECS seconds, showing its process list, and its own CPU time (utime + stime from
# /proc/PID/stat, every thread included) and peak RSS (VmHWM) are read.
#
#   bench/ui/run.sh            # builds the release binary first
#   NO_BUILD=1 MEMTALLY=path bench/ui/run.sh
#
# env: PROCS (1000) processes to reach with extra sleeping C children
# (one small exec'd program each, killed at the end), SECS (60), WARM (3)
# seconds before the measurement starts (start-up left out), ONLY (a
# program name: measure just memtally, htop or btop), MEMTALLY_ARGS
# (extra arguments to `memtally ui`).
# htop and btop are measured when installed (Debian: apt-get install htop btop).
set -euo pipefail
cd "$(dirname "$0")/../.."
PROCS=${PROCS:-1000}
SECS=${SECS:-60}
WARM=${WARM:-3}
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -p memtally-cli --locked >&2
fi
MEMTALLY=${MEMTALLY:-target/release/memtally}
SOCK="memtally-bench-$$"
work=$(mktemp -d)
sleepers=()
cleanup() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  if [ ${#sleepers[@]} -gt 0 ]; then kill "${sleepers[@]}" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

count_procs() { local p=(/proc/[0-9]*); echo ${#p[@]}; }
# A sleeping child as small as a process gets: no shell, no coreutils.
printf '#include <unistd.h>\nint main(void) { for (;;) pause(); }\n' > "$work/sleeper.c"
cc -O2 -o "$work/sleeper" "$work/sleeper.c"
have=$(count_procs)
for ((i = have; i < PROCS; i++)); do
  "$work/sleeper" &
  sleepers+=($!)
done
sleep 1
echo "processes: $(count_procs) (with ${#sleepers[@]} sleeping C children)"
echo "kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# btop reads its refresh interval from its config file only.
mkdir -p "$work/home/.config/btop"
printf 'update_ms = 1000\n' > "$work/home/.config/btop/btop.conf"

ticks=$(getconf CLK_TCK)
cpu_ticks() { # "utime stime" of a process (all its threads)
  local stat
  stat=$(cat "/proc/$1/stat")
  stat=${stat##*) }
  set -- $stat
  echo "${12} ${13}"
}

# The programs run at the same time, each in its own tmux session
# (200x50), over one measured window: each sees the same process list and
# the same load, so their figures compare (one window after another, a
# change of load between windows lands in the ratio).
#
# start NAME KEYS COMMAND...: runs COMMAND as a session's process, sends
# KEYS after start-up (to be on the process list).
names=()
pids=()
start() {
  local name=$1 keys=$2 session="s${#names[@]}"
  shift 2
  tmux -L "$SOCK" -f /dev/null new-session -d -s "$session" -x 200 -y 50 \
    env HOME="$work/home" TERM=screen-256color LANG=C.UTF-8 "$@"
  tmux -L "$SOCK" set-option -g window-size manual >/dev/null
  pids+=("$(tmux -L "$SOCK" display-message -p -t "$session" '#{pane_pid}')")
  names+=("$name")
  sleep 1
  if [ -n "$keys" ]; then tmux -L "$SOCK" send-keys -t "$session" $keys; fi
}

want() { [ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ]; }
if want memtally; then
  # shellcheck disable=SC2086
  start "memtally ui (process list)" Enter "$MEMTALLY" ui --interval 1s ${MEMTALLY_ARGS:-}
fi
if want htop && command -v htop >/dev/null; then
  start "htop -d 10" "" htop -d 10
fi
if want btop && command -v btop >/dev/null; then
  start "btop (update_ms 1000)" "" btop --utf-force
fi
sleep "$WARM"
declare -a u0 s0
for i in "${!pids[@]}"; do read -r "u0[$i]" "s0[$i]" < <(cpu_ticks "${pids[$i]}"); done
sleep "$SECS"
echo
echo "All ran at the same time, over the same ${SECS} s (load at the end: $(cut -d' ' -f1-3 /proc/loadavg))."
echo "| program | CPU in ${SECS} s | of one core | peak RSS (VmHWM) |"
echo "| --- | --- | --- | --- |"
for i in "${!pids[@]}"; do
  read -r u1 s1 < <(cpu_ticks "${pids[$i]}")
  hwm=$(awk '/^VmHWM/ {print $2}' "/proc/${pids[$i]}/status")
  awk -v n="${names[$i]}" -v u=$((u1 - u0[i])) -v k=$((s1 - s0[i])) -v hz="$ticks" -v s="$SECS" -v h="$hwm" \
    'BEGIN { d = u + k; printf "| %s | %.2f s (user %.2f, sys %.2f) | %.2f %% | %.1f MiB |\n", n, d / hz, u / hz, k / hz, 100 * d / hz / s, h / 1024 }'
done
