#!/usr/bin/env bash
# Measures the release window under Xvfb (BENCHMARKS.md, issue 10):
#   1. first frame: WARPSCOPE_EXIT_AFTER_FIRST_FRAME=1 makes the app print the time from process
#      start to its first frame and to the first frame with the scene's result, then close; the
#      process's whole wall time (start to exit) is measured here too. RUNS runs.
#   2. idle CPU: the app started normally, left SETTLE s to start up, then its CPU time (utime +
#      stime from /proc/PID/stat) over IDLE s of nobody touching it.
# Usage: scripts/measure-window.sh [BINARY] (default target/release/warpscope; set
# CARGO_TARGET_DIR's binary explicitly when you build elsewhere). Needs Xvfb; uses lavapipe
# when there is no GPU. Starts its own Xvfb on DISPLAY_NUM (default :107) and stops only it.
set -euo pipefail
BIN=${1:-target/release/warpscope}
DISPLAY_NUM=${DISPLAY_NUM:-:107}
RUNS=${RUNS:-5}
SETTLE=${SETTLE:-5}
IDLE=${IDLE:-10}
SCENE=${SCENE:-reduction}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
Xvfb "$DISPLAY_NUM" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
XVFB=$!
trap 'kill $XVFB 2>/dev/null || true' EXIT
for _ in $(seq 50); do xdpyinfo -display "$DISPLAY_NUM" >/dev/null 2>&1 && break; sleep 0.1; done
export DISPLAY=$DISPLAY_NUM
unset WAYLAND_DISPLAY

echo "== first frame ($RUNS runs, scene $SCENE)"
for i in $(seq "$RUNS"); do
  t0=$(date +%s.%N)
  WARPSCOPE_EXIT_AFTER_FIRST_FRAME=1 "$BIN" gui --scene "$SCENE" 2>&1 | grep '^warpscope: first frame' || true
  t1=$(date +%s.%N)
  echo "run $i: process start to exit $(echo "($t1 - $t0) * 1000" | bc -l | xargs printf '%.0f') ms"
done

echo "== idle CPU (settle ${SETTLE} s, then ${IDLE} s untouched, scene $SCENE)"
"$BIN" gui --scene "$SCENE" >/dev/null 2>&1 &
APP=$!
sleep "$SETTLE"
ticks() { awk '{print $14 + $15}' "/proc/$APP/stat"; }
hz=$(getconf CLK_TCK)
a=$(ticks); sleep "$IDLE"; b=$(ticks)
echo "CPU over ${IDLE} s idle: $(( b - a )) ticks of 1/${hz} s = $(echo "100 * ($b - $a) / $hz / $IDLE" | bc -l | xargs printf '%.2f')% of one core"
kill "$APP" 2>/dev/null || true
wait "$APP" 2>/dev/null || true
