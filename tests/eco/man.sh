#!/bin/sh
# man.sh: every command in `delayq --help` has a man page, built from docs/man/*.scd; each
# page renders without a groff warning; `man ./build/docs/man/delayq-top.1` works; and
# every option that `delayq [CMD] --help` prints appears in the rendered page.
set -u
. "$(dirname "$0")/lib.sh"
need man groff col
doc="$build/docs/man"
# render PAGE: the page as plain ASCII text (so "-" stays "-")
render() { MANWIDTH=100 man -l -E ascii "$1" 2>/dev/null | col -b; }
# options OUTPUT: every -x / --long-option in a --help text, once each
options() {
  grep -oE '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[^-]*//' | sort -u
}
# covers PAGE HELPFILE: every option of HELPFILE is a word of PAGE's text
covers() {
  render "$1" >"$work/page.txt"
  missing=""
  for o in $(options <"$2"); do
    grep -qE -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|\$)" "$work/page.txt" || missing="$missing $o"
  done
  [ -z "$missing" ] || { echo "# $1 lacks:$missing"; return 1; }
}

"$bin" --help >"$work/help.txt"
cmds=$(sed -n '/^Commands:/,/^$/p' "$work/help.txt" | awk '/^  [a-z]/ { print $1 }')
check "delayq --help lists commands" [ -n "$cmds" ]
check "delayq.1 covers delayq --help" covers "$doc/delayq.1" "$work/help.txt"
check "delayq.1 names --version" grep -q -- '--version' "$work/page.txt"
render "$doc/delayq.1" >"$work/delayq.txt"
for c in $cmds; do
  page="$doc/delayq-$c.1"
  check "page for $c" [ -f "$page" ] || continue
  groff -man -Tascii -ww -z "$page" >"$work/groff.txt" 2>&1
  check "delayq-$c.1 renders without warnings" [ ! -s "$work/groff.txt" ] ||
    sed 's/^/# /' "$work/groff.txt"
  "$bin" "$c" --help >"$work/help-$c.txt"
  check "delayq-$c.1 covers every option of delayq $c --help" covers "$page" "$work/help-$c.txt"
  check "delayq.1 lists $c" grep -qE "^ +$c\$" "$work/delayq.txt"
done
# as README says: man ./build/docs/man/delayq-top.1 (a name with a slash is a file)
(cd "$build" && MANWIDTH=80 man ./docs/man/delayq-top.1 2>&1) >"$work/top.txt"
check "man ./build/docs/man/delayq-top.1 renders" grep -q 'delayq top - the queue inspector' "$work/top.txt"
# the comparison can fail: an option the page lacks is caught
printf '  --no-such-option   x\n' >"$work/fake-help.txt"
check "an option missing from a page is detected" not covers "$doc/delayq-top.1" "$work/fake-help.txt"
finish
