#!/bin/sh
# lua_locals.sh: every script keeps room under Lua 5.1's 200 locals a function may hold.
# Under EVALSHA a script's chunk is lib.lua + the script (PROTOCOL.md 6, path 2), so the
# prelude's top-level locals and the script's count together; in the function library the
# prelude's count with bind(). Each text must still compile (SCRIPT LOAD / FUNCTION LOAD
# on a real server) with MARGIN more locals declared at its top; the margin each has is
# printed. Past it: fold helpers into the prelude's do-blocks (docs/HACKING.md, "Lua limits").
. "${DQ_SOURCE_ROOT:?}/tests/eco/lib.sh"
MARGIN=20
need redis-server redis-cli
redis_start
cli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }

# pad N: a line declaring N locals
pad() { i=1; printf 'local _p1'; while [ "$i" -lt "$1" ]; do i=$((i + 1)); printf ', _p%d' "$i"; done; echo; }

# loads FILE with N locals before it (after its first line if it is the library)
loads() {
  if [ "$2" = lib ]; then
    { head -n 1 "$1"; pad "$3"; tail -n +2 "$1"; } >"$work/t.lua"
    cli -x FUNCTION LOAD REPLACE <"$work/t.lua" 2>&1 | grep -q '^delayq_'
  else
    { pad "$3"; cat "$1"; } >"$work/t.lua"
    [ "$(cli -x SCRIPT LOAD <"$work/t.lua" 2>&1 | wc -c)" -eq 41 ]
  fi
}

# the largest N (< 200) the text still takes
margin() {
  lo=0 hi=200
  loads "$1" "$2" 1 || { echo 0; return; }
  lo=1
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    if loads "$1" "$2" "$mid"; then lo=$mid; else hi=$mid; fi
  done
  echo "$lo"
}

for s in "$src"/lua/*.lua; do
  name=$(basename "$s" .lua)
  [ "$name" = lib ] && continue
  { cat "$src/lua/lib.lua"; echo; cat "$s"; } >"$work/$name.lua"
  m=$(margin "$work/$name.lua" script)
  check "$name under EVALSHA: room for $m more locals (>= $MARGIN)" [ "$m" -ge "$MARGIN" ]
done
m=$(margin "$build/lua/delayq_library.lua" lib)
check "the function library: room for $m more locals (>= $MARGIN)" [ "$m" -ge "$MARGIN" ]
finish
