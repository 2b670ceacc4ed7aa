#!/bin/sh
# top_terms.sh: delayq top end to end, in tmux, on the live demo queue, as engineers
# arrive: the TERM variants, NO_COLOR, and --read-only.
. "$(dirname "$0")/lib.sh"
start_demo

# 8b. the TERM variants an engineer arrives with (and a terminal without colours): each
# draws the main screen, answers keys and quits. Entries missing on a machine are skipped.
for term in xterm xterm-256color screen screen-256color tmux-256color vt100; do
  infocmp "$term" >/dev/null 2>&1 || { echo "# TERM=$term: no terminfo entry, skipped"; continue; }
  session top 100 30 "env TERM=$term $bin top"
  if wait_for screen_has "4 Failed " && tm send-keys -t top '?' &&
     wait_for screen_has "r            Failed: requeue" && tm send-keys -t top Escape q &&
     wait_for gone; then ok "TERM=$term: draws, answers keys, quits"
  else bad "TERM=$term"; fi
done

# 8c. NO_COLOR: attributes (bold, reverse) but not one colour; without it, colours
colours() { tm capture-pane -e -p -t top | grep -cE "$(printf '\033')\[([0-9;]*;)?(3[0-7]|4[0-7]|38;5|48;5)[;m]"; }
for nc in 1 0; do
  if [ "$nc" = 1 ]; then session top 140 40 "env NO_COLOR=1 $bin top"
  else session top 140 40 "env -u NO_COLOR $bin top"; fi
  wait_for screen_has "[4] Failed (" || bad "NO_COLOR=$nc start"
  n=$(colours)
  if { [ "$nc" = 1 ] && [ "$n" -eq 0 ]; } || { [ "$nc" = 0 ] && [ "$n" -gt 0 ]; }; then
    ok "NO_COLOR=$nc: $n lines with colour codes"
  else bad "NO_COLOR=$nc: $n lines with colour codes"; fi
  tm send-keys -t top q
  wait_for gone || bad "quit (NO_COLOR=$nc)"
done

# 9. --read-only refuses actions and says so
session top 140 40 "$bin top --read-only"
before=$(stat failed)
if wait_for screen_has "READ-ONLY"; then
  tm send-keys -t top 4
  tm send-keys -t top r
  if wait_for screen_has "read-only: actions are disabled" && [ "$(stat failed)" -eq "$before" ]; then
    ok "--read-only refuses r"
  else bad "read-only refusal"; fi
else bad "read-only badge"; fi
tm send-keys -t top q
wait_for gone || bad "read-only session quits"

finish
