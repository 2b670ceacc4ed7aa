#!/bin/sh
# screenshots.sh: makes screenshots/*.png from real tmux captures of delayq top on the
# demo queue: the main screen, the details of a failed task with its stack trace, the
# help overlay, the Errors view (E) and one group in Failed, and 80x24; then the
# attempt timeline and the fix-and-requeue confirmation. Usage: tests/tui/screenshots.sh [BUILD_DIR]
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
wait_text "Failed FILTER group"
shot top-errors-group 140
tm send-keys -t shot Escape
tm resize-window -t shot -x 80 -y 24
wait_text " 1 Due "
shot top-80x24 80

# history: the attempt timeline of a task retried until it failed, and the confirmation
# of fix and requeue (e) after an "editor" corrected its total, on a queue of its own
"$bin" config -q fix backoff_base_ms=1ms >/dev/null
"$bin" enqueue -q fix --id inv-7 --max-attempts 3 \
  --json '{"invoice":7,"total":"12.50","lines":[{"sku":"A-1","qty":2,"price":"6.25"}]}' >/dev/null
"$bin" work -q fix --quiet --name billing-7f9c@pod-3 -- \
  sh -c 'echo "invoice 7: total 12.50 does not match the lines (12.5)" >&2; exit 75' 2>/dev/null &
fix_worker=$!
i=0
until "$bin" stats -q fix --json | grep -qF '"failed":1,'; do
  i=$((i + 1)); [ $i -lt 200 ] || { echo "the fix task did not fail" >&2; exit 1; }; sleep 0.05
done
kill "$fix_worker"; wait "$fix_worker" 2>/dev/null || true
printf '#!/bin/sh\nsed "s/\\"12.50\\"/\\"12.5\\"/" "$1" >"$1.new" && mv "$1.new" "$1"\n' >"$work/ed.sh"
chmod +x "$work/ed.sh"
tm resize-window -t shot -x 120 -y 34
# the same session, another program (tmux 3.3a crashes on a second session here)
tm respawn-pane -k -t shot "env -u VISUAL EDITOR=$work/ed.sh $bin top -q fix"
wait_text "[4] Failed (1)"
tm send-keys -t shot 4 Enter
wait_text "history       3 attempts"
shot top-timeline 120
tm send-keys -t shot Escape e
wait_text "with this payload? y/N"
shot top-fix 120
tm send-keys -t shot n q
"$bin" queues --forget fix >/dev/null
