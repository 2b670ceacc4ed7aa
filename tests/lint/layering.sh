#!/bin/sh
# layering.sh: dependencies point one way (STYLE.md §0.1). The library (src/lib,
# src/fmt) never includes curses or prints to a terminal; only src/tui/term.c
# includes curses. layering.py resolves quoted includes and checks that they point
# down cli > tui > fmt > lib, that modules include no cycle, and that hiredis stays in
# the files below.
set -eu

# The files that talk to hiredis: the only ones that may include it or name redisReply.
HIREDIS_ALLOW="src/lib/client.c src/lib/client.h src/lib/conn.c src/lib/scripts.c src/lib/scripts.h
src/lib/registry.c src/lib/reply.c src/lib/reply.h
src/lib/sentinel.c src/lib/sentinel.h src/lib/parts.c"
# sentinel.c: reads the sentinels' replies (SENTINEL get-master-addr-by-name, ROLE)
# cluster.[ch]: the cluster router reads redirections (MOVED, ASK) and CLUSTER SLOTS
# from the replies before any caller sees them
HIREDIS_ALLOW="$HIREDIS_ALLOW src/lib/cluster.c src/lib/cluster.h"

root=${DQ_SOURCE_ROOT:?}
fail=0
if ! HIREDIS_ALLOW=$HIREDIS_ALLOW "${PYTHON:-python3}" "$(dirname "$0")/layering.py" "$root" >&2; then
  fail=1
fi
if grep -rlE '#include <n?curses' "$root/src/lib" "$root/src/fmt" "$root/src/cli" 2>/dev/null; then
  echo "layering: curses included outside src/tui/term.c" >&2
  fail=1
fi
if [ -d "$root/src/tui" ]; then
  bad=$(grep -rlE '#include <n?curses' "$root/src/tui" | grep -v '/term\.c$' || true)
  if [ -n "$bad" ]; then
    echo "layering: curses included in $bad" >&2
    fail=1
  fi
fi
if grep -nE '\b(printf|fprintf|puts|fputs|perror)\s*\(' "$root/src/lib"/*.c "$root/src/fmt"/*.c \
    | grep -v 'snprintf\|vsnprintf'; then
  echo "layering: the library must not print (report through dq_err)" >&2
  fail=1
fi
if grep -nE '\b(abort|exit)\s*\(' "$root/src/lib"/*.c "$root/src/fmt"/*.c; then
  echo "layering: the library must not abort or exit" >&2
  fail=1
fi
if grep -lE 'hiredis' "$root/src/cli"/*.c 2>/dev/null; then
  echo "layering: the CLI talks to Redis only through libdelayq" >&2
  fail=1
fi
[ $fail -eq 0 ] && echo "layering ok"
exit $fail
