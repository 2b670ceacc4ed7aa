#!/bin/sh
# screenshots.sh: makes screenshots/*.png from real tmux captures of delayq top on the
# demo queue: the main screen, the details of a failed task with its stack trace, the
# help overlay, the Errors view (E) and one group in Failed, and 80x24.
# Usage: tests/tui/screenshots.sh [BUILD_DIR]
# Needs tmux, python3-pil and fonts-dejavu-core (Debian packages).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build}/src/delayq
out=$root/screenshots
work=$(mktemp -d)
sock="dqshot$$"
tm() { tmux -L "$sock" "$@"; }
demo_pid=
cleanup() {
  tm kill-server 2>/dev/null || true
  [ -n "$demo_pid" ] && kill "$demo_pid" 2>/dev/null && wait "$demo_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$bin" demo --keep >"$work/demo.out" 2>&1 &
demo_pid=$!
i=0
until grep -qo 'redis://127.0.0.1:[0-9]*' "$work/demo.out" 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 100 ] || { echo "demo did not start" >&2; exit 1; }; sleep 0.05
done
export DELAYQ_URL=$(grep -o 'redis://127.0.0.1:[0-9]*' "$work/demo.out" | head -1)
export DELAYQ_QUEUE=demo TERM=xterm-256color

# wait_text TEXT: polls the screen for TEXT (5 s)
wait_text() {
  i=0
  until tm capture-pane -p -t shot | grep -qF -- "$1"; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "timed out waiting for: $1" >&2; exit 1; }; sleep 0.05
  done
}
shot() { # NAME COLS
  tm capture-pane -p -e -t shot >"$work/$1.txt"
  /usr/bin/python3 "$root/tests/tui/render.py" "$work/$1.txt" "$out/$1.png" "$2"
  echo "screenshots/$1.png"
}

mkdir -p "$out"
tm -f /dev/null new-session -d -s shot -x 140 -y 40 "$bin top"
tm set -g window-size manual
wait_text "[4] Failed"
sleep 3 # let the sparkline and rates fill in: this is a picture, not a test
shot top-main 140
tm send-keys -t shot 4 Enter
wait_text "stack trace"
shot top-details 140
tm send-keys -t shot Escape '?'
wait_text "Keys"
shot top-help 140
tm send-keys -t shot Escape E
wait_text "error groups of demo"
shot top-errors 140
tm send-keys -t shot Enter
wait_text "Failed of group"
shot top-errors-group 140
tm send-keys -t shot Escape
tm resize-window -t shot -x 80 -y 24
wait_text " 1 Due "
shot top-80x24 80
tm send-keys -t shot q
