# Sourced by the many-process benchmarks: `spawn N` starts N sleeping C
# children (bench/top/sleeper.c) and waits until each has exec'd;
# `unspawn` (also on exit) kills exactly those. Needs $work (a temp dir).
sleepers=()
spawn() {
  [ -x "$work/sleeper" ] || cc -O2 -o "$work/sleeper" "$(dirname "${BASH_SOURCE[0]}")/sleeper.c"
  local i
  for ((i = 0; i < $1; i++)); do "$work/sleeper" & sleepers+=($!); done
  for p in "${sleepers[@]}"; do
    until [ "$(cat /proc/$p/comm 2>/dev/null)" = sleeper ]; do sleep 0.01; done
  done
}
unspawn() {
  [ ${#sleepers[@]} -eq 0 ] && return 0
  kill "${sleepers[@]}" 2>/dev/null || true
  wait "${sleepers[@]}" 2>/dev/null || true
  sleepers=()
}
