#!/bin/sh
# help.sh: the declarative command line. Every `delayq CMD --help` is printed from the
# command's option table: its usage and own options, within 80 columns and 24 lines,
# one line pointing to delayq help
# options instead of the global and TLS options, which delayq help options and
# delayq --help print once, complete.
# Then the one parser against a real server: a global option anywhere on the line,
# --opt=value, short letters, "--" ending options, and the usage errors (exit 2, the
# field and the limit named) for a missing value, an unknown option and a range.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
dq() { "$bin" "$@"; }

"$bin" help --specs >"$work/specs.txt"
"$bin" --help >"$work/help.txt"
cmds=$(sed -n '/^Commands:/,/^$/p' "$work/help.txt" | awk '/^  [a-z]/ { print $1 }')
check "help --specs lists every command of delayq --help" \
  [ "$(awk 'NF == 1 { print $1 }' "$work/specs.txt")" = "$cmds" ]
for o in $(awk '$1 == "global" { print $2 }' "$work/specs.txt"); do
  check "delayq --help lists the global $o" grep -q -- "$o" "$work/help.txt"
done
check "delayq --help has the TLS block once" [ "$(grep -c -- '--tls-server-name' "$work/help.txt")" = 1 ]
"$bin" help options >"$work/options.txt"
check "delayq help options is the global block of delayq --help" \
  sh -c "grep -q -- '--tls-server-name' '$work/options.txt' && ! grep -q '^Commands:' '$work/options.txt'"
check "delayq help options is within delayq --help, line for line" \
  sh -c "[ \"\$(grep -xFf '$work/help.txt' '$work/options.txt' | wc -l)\" = \"\$(wc -l <'$work/options.txt')\" ]"

# fits LINES FILE: at most LINES lines of at most 80 columns
fits() {
  fit_n=$(wc -l <"$2") # not $n: check's own
  fit_w=$(awk '{ if (length > m) m = length } END { print m + 0 }' "$2")
  [ "$fit_n" -le "$1" ] && [ "$fit_w" -le 80 ] || { echo "# $2: $fit_n lines, $fit_w columns"; return 1; }
}
for c in $cmds; do
  h="$work/help-$c.txt"
  # --help needs no server
  "$bin" "$c" --help --url redis://127.0.0.1:1 >"$h" 2>"$work/err.txt"
  rc=$?
  check "$c --help: exit 0, nothing on stderr" [ "$rc" = 0 ] && [ ! -s "$work/err.txt" ]
  check "$c --help: its usage" grep -q "^usage: delayq $c" "$h"
  lines=24
  check "$c --help fits $lines lines of 80 columns" fits "$lines" "$h"
  check "$c --help points to delayq help options for --url" grep -q -- '--url.*delayq help options' "$h"
  check "$c --help does not repeat the TLS options" not grep -q -- '--tls-server-name' "$h"
  for o in $(awk -v c="$c" '$1 == c && NF >= 4 { print $2 }' "$work/specs.txt"); do
    check "$c --help shows its $o" grep -q -- "$o" "$h"
  done
done

# the parser, on a real server
redis_start
q=help
dq enqueue -q "$q" --id t1 --json '{"n":1}' >/dev/null
# expect_usage TEXT CMD...: exit 2, TEXT on stderr, nothing on stdout
expect_usage() {
  want=$1
  shift
  "$bin" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  [ "$rc" = 2 ] && grep -qF -- "$want" "$work/err" && [ ! -s "$work/out" ] ||
    { echo "# $*: exit $rc, stderr: $(cat "$work/err")"; return 1; }
}
# expect_exit1 CMD...: exit 1 (the operation failed), the task named on stderr
expect_exit1() {
  "$bin" "$@" >/dev/null 2>"$work/err"
  rc=$?
  [ "$rc" = 1 ] && grep -q -- '--json' "$work/err" || { echo "# $*: exit $rc: $(cat "$work/err")"; return 1; }
}
check "a global option after the view" sh -c "'$bin' ls due -q '$q' | grep -q '^t1 '"
check "--queue=NAME and --limit=N" sh -c "'$bin' ls --queue='$q' --limit=1 due | grep -q '^t1 '"
check "-n N" sh -c "'$bin' ls due -n 1 -q '$q' | grep -q '^t1 '"
check "-- ends options: an id that looks like one" expect_exit1 show -q "$q" -- --json
check "missing value" expect_usage "--limit needs a value" ls due -q "$q" --limit
check "unknown option" expect_usage 'unexpected argument "--frob"' ls due -q "$q" --frob
check "range, named" expect_usage '--limit: "0" is not a whole number in 1..1000' ls due --limit=0
check "duration range, named" expect_usage "--timeout: 11m is not in 1ms..10m" stats --timeout 11m
check "enum" expect_usage "--log-level: use error, warn, info or debug" work --log-level loud -- true
check "work's own --timeout, a duration" expect_usage '--timeout: "5q"' work --timeout 5q -- true
check "--profile after the command" expect_usage "--profile goes before the command" stats --profile x
redis_stop
finish
