#!/bin/sh
# top_parts.sh: delayq top on a partitioned queue (PROTOCOL.md 14), in tmux, on a real
# server: the header says "partitions 4 on 1 server" and the counts are the sums; N opens
# the Partitions view with one row per partition (its index, counts, node and name), each
# row's due and future exactly what the routing hash (FNV-1a of the id, mod 4) put there,
# computed here independently of the C code; the view follows a new task while open; the
# Overview lists the queue once with the sums; on a
# queue that is not partitioned N says so and the header has no partitions.
. "$(dirname "$0")/lib.sh"
start_demo
q=pq
"$bin" config -q "$q" partitions=4 >/dev/null || { echo "not ok - config partitions=4"; exit 1; }
# the partition of caller id $1: FNV-1a 32 of its bytes, mod 4 (PROTOCOL.md 14.3)
part_of() {
  python3 -c 'import sys
h = 2166136261
for b in sys.argv[1].encode():
    h = ((h ^ b) * 16777619) & 0xffffffff
print(h % 4)' "$1"
}
for i in 0 1 2 3 4 5 6 7 8 9 10; do
  "$bin" enqueue -q "$q" --id "t$i" --json '{"n":1}' >/dev/null
  echo "due $(part_of "t$i")" >>"$work/expect"
done
for i in 0 1 2 3 4; do
  "$bin" enqueue -q "$q" --id "f$i" --delay 1h --json '{"n":2}' >/dev/null
  echo "future $(part_of "f$i")" >>"$work/expect"
done
count() { grep -c "^$1 $2\$" "$work/expect"; }

main_session "$bin top -q $q --refresh 250ms"
if wait_for screen_has "partitions 4 on 1 server"; then ok "the header: partitions 4 on 1 server"
else bad "the header names the partitions"; fi
# the counts line shows the logical queue: the sums over the partitions
if wait_for screen_has "due 11 "; then ok "the counts are the sums (due 11)"
else bad "the summed due count"; fi

tm send-keys -t top N
wait_for screen_has "partitions of $q: 4 on 1 server" || bad "N opens the Partitions view"
# row "I DUE FUTURE INFLIGHT FAILED DONE/MIN NODE NAME" of partition $1 (name $2)
row_is() {
  screen | awk -v i="$1" -v name="$2" -v due="$3" -v fut="$4" -v node="127.0.0.1:$port" '
    $1 == i && $NF == name { found = 1; ok = $2 == due && $3 == fut && $4 == 0 && $5 == 0 &&
                              $7 == node }
    END { exit !(found && ok) }'
}
rows_ok() {
  row_is 0 "$q" "$(count due 0)" "$(count future 0)" &&
    row_is 1 "$q~1.0" "$(count due 1)" "$(count future 1)" &&
    row_is 2 "$q~2.0" "$(count due 2)" "$(count future 2)" &&
    row_is 3 "$q~3.0" "$(count due 3)" "$(count future 3)"
}
if wait_for rows_ok; then ok "N: one row per partition, its due and future where the hash put them"
else bad "the Partitions view's rows (expected: $(sort "$work/expect" | uniq -c | tr '\n' ';'))"; fi
screen_has "DONE/MIN" && ok "... with done per minute" || bad "the DONE/MIN column"

# live: a task enqueued while the view is open shows in its partition's row
"$bin" enqueue -q "$q" --id t11 --json '{"n":3}' >/dev/null
echo "due $(part_of t11)" >>"$work/expect"
if wait_for rows_ok; then ok "the view follows a new task (t11 in partition $(part_of t11))"
else bad "the Partitions view refreshes"; fi
tm send-keys -t top Escape
wait_for screen_has "due 12 " && ok "Esc: back to the main screen, due 12" || bad "Esc back"
tm send-keys -t top q
wait_for gone || bad "quit"

# the Overview (Q): the queue once, with the sums, never a partition
session top 140 40 "$bin top -q $q --refresh 250ms"
wait_for screen_has "partitions 4 on 1 server" && tm send-keys -t top Q
ov_row() { screen | grep -E "(^| )$q +12 " | grep -qv "~"; }
if wait_for ov_row && screen_lacks "$q~"; then ok "the Overview: $q once, due 12 (the sums)"
else bad "the Overview's row of the partitioned queue"; fi
tm send-keys -t top Escape q
wait_for gone || bad "quit the Overview"

# a queue that is not partitioned: no partitions in the header, N says so
session top 140 40 "$bin top -q demo --refresh 250ms"
wait_for screen_has "queue demo" || bad "the demo queue opens"
screen_lacks "| partitions" && ok "an unpartitioned queue's header has no partitions" ||
  bad "the unpartitioned header"
tm send-keys -t top N
wait_for screen_has "This queue is not partitioned" && ok "N on it says it is not partitioned" ||
  bad "N on an unpartitioned queue"
tm send-keys -t top Escape q
wait_for gone || bad "quit the demo session"
finish
