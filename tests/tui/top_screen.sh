#!/bin/sh
# top_screen.sh: delayq top end to end, in tmux, on the live demo queue: what the main
# screen shows (counters, escaped bytes from Redis), the details of a failed task, the
# copy (OSC 52), search, bracketed paste, the layout across resizes, help, and q.
. "$(dirname "$0")/lib.sh"
start_demo
main_session "$bin top --refresh 250ms"

# 1. the counters match Redis
failed_n=$(stat failed)
due_n=$(stat due)
if wait_for screen_has "failed $failed_n" && screen_has "[4] Failed ($failed_n)" &&
   screen_has "[1] Due ("; then ok "counters and pane totals match stats ($failed_n failed)"
else bad "counters"; fi

# 2. escape sequences and invalid UTF-8 from Redis are shown escaped
if screen_has 'hostile-escapes' && screen_has '\u001b[2J' && screen_has '\xff' &&
   screen_has "delayq top"; then ok "hostile payload bytes are escaped, screen intact"
else bad "escaping"; fi

# 3. Enter on a failed task shows its stack trace
tm send-keys -t top 4
tm send-keys -t top Enter
has_trace() { screen | grep -qE 'goroutine 1 \[running\]:|java.lang.IllegalStateException|Traceback'; }
if wait_for screen_has "stack trace" && screen_has "reason        error" && has_trace; then
  ok "details show error and stack trace"
else bad "details"; fi
tm send-keys -t top Escape
wait_for screen_has "[4] Failed" || bad "back to the main screen"

# 3b. y in the details of a failed task copies its stack trace (OSC 52)
tm send-keys -t top 4
tm send-keys -t top Enter
wait_for screen_has "stack trace"
tm send-keys -t top y
copied() { tm show-buffer 2>/dev/null | grep -qE 'goroutine|java.lang|Traceback'; }
if wait_for copied; then ok "y copies the stack trace to the clipboard"; else bad "copy"; fi
tm send-keys -t top Escape
wait_for screen_has "[4] Failed"

# 3c. / searches failed tasks on the server; Esc clears it
tm send-keys -t top /
wait_for screen_has "search failed tasks" || bad "search prompt"
tm send-keys -t top -l "card declined"
tm send-keys -t top Enter
if wait_for screen_has 'Failed FILTER: 2 matching "card declined" (searched'; then
  ok "/ finds the 2 failures whose error says card declined"
else bad "search"; fi
tm send-keys -t top Escape
wait_for screen_has "[4] Failed (" && ok "Esc clears the search" || bad "clear search"
tm send-keys -t top 2 /
wait_for screen_has "search this pane" || bad "search prompt on Future"
tm send-keys -t top -l "subscription.renew"
tm send-keys -t top Enter
if wait_for screen_has 'Future FILTER: 12 matching "subscription.renew" (searched'; then
  ok "/ on Future finds the 12 renewals by payload"
else bad "search future"; fi
tm send-keys -t top Escape 4

# 3c2. bracketed paste: a pasted "card declined<newline>W" is search text up to the
# newline; the newline does not submit and the W after it is not a key (workers view)
tm set-buffer -b dqpaste "$(printf 'card declined\nW')"
tm send-keys -t top /
wait_for screen_has "search failed tasks" || bad "search prompt for the paste"
tm paste-buffer -p -b dqpaste -t top
if wait_for screen_has "Esc: cancel): card declined_" && screen_lacks "workers of demo" &&
   screen_lacks "FILTER"; then ok "a pasted newline neither submits nor becomes a key"
else bad "bracketed paste in a prompt"; fi
tm send-keys -t top Escape
tm set-buffer -b dqpaste "W"
tm paste-buffer -p -b dqpaste -t top
if wait_for screen_has "paste ignored" && screen_lacks "workers of demo"; then
  ok "a paste on the main screen is ignored, not run as keys"
else bad "paste on the main screen"; fi

# 6. resize to 80x24 and back; the bottom-right cell holds nothing from before (the
# hints end before it: a character in column 80 of the last line is left over)
tm resize-window -t top -x 80 -y 24
if wait_for screen_has " 1 Due " && screen_has "[4] Failed"; then ok "80x24 layout"
else bad "80x24"; fi
corner() { [ -z "$(screen | tail -1 | cut -c80- | tr -d ' ')" ]; }
for size in "40 10" "20 5" "120 40" "80 24"; do
  tm resize-window -t top -x "${size% *}" -y "${size#* }"
done
wait_for screen_has " 1 Due " && wait_for corner && ok "no stale bottom-right cell after resizes" ||
  bad "stale bottom-right cell: [$(screen | tail -1)]"
tm resize-window -t top -x 140 -y 40
if wait_for screen_has "[2] Future ("; then ok "back to 140x40"; else bad "resize back"; fi

# 7. help overlay
tm send-keys -t top '?'
if wait_for screen_has "r            Failed: requeue"; then ok "help lists the keys"; else bad "help"; fi
tm send-keys -t top Escape

# 8. q quits cleanly
tm send-keys -t top q
if wait_for gone; then ok "q quits"; else bad "quit"; fi

finish
