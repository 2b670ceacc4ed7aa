#!/bin/sh
# install.sh: `meson install` into a DESTDIR puts every file where it belongs; a C
# producer compiled against the installed delayq.pc (shared, then static) enqueues to
# a private redis-server; the installed delayq reads the tasks back and prints its
# version; libdelayq.a holds the whole API and only dq_ symbols; systemd-analyze
# verify accepts the installed unit. $1: the build's b_sanitize (the producer must be
# built the same way to link an instrumented library); $2: "man" when the man pages
# are built (-Ddocs).
set -u
. "$(dirname "$0")/lib.sh"
need cc pkg-config readelf nm redis-cli python3 systemd-analyze
san=${1:-none}
man=${2:-man}
root="$work/root"
meson install -C "$build" --no-rebuild --quiet --destdir "$root" >"$work/install.log" 2>&1
check "meson install --destdir" [ $? -eq 0 ] || sed 's/^/# /' "$work/install.log"

# the paths, from the build's own options
opt() { meson introspect --buildoptions "$build" | python3 -c 'import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"; }
prefix=$(opt prefix)
bindir=$prefix/$(opt bindir)
libdir=$prefix/$(opt libdir)
incdir=$prefix/$(opt includedir)
mandir=$prefix/$(opt mandir)
datadir=$prefix/$(opt datadir)
unitdir=$(opt systemdunitdir)
# as completions/meson.build finds it
bashdir=$(pkg-config --define-variable=datadir="$datadir" --variable=completionsdir \
  bash-completion 2>/dev/null)
[ -n "$bashdir" ] || bashdir=$datadir/bash-completion/completions
[ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
for f in "$bindir/delayq" "$libdir/libdelayq.so" "$libdir/libdelayq.a" "$incdir/delayq.h" \
    "$libdir/pkgconfig/delayq.pc" "$unitdir/delayq-work@.service" "$bashdir/delayq" \
    "$datadir/zsh/site-functions/_delayq" "$datadir/doc/delayq/examples/delayq-work.env.example"; do
  check "installed: $f" [ -e "$root$f" ]
done
if [ "$man" = man ]; then
  npages=$(ls "$src"/docs/man/*.scd | wc -l)
  check "installed: all $npages man pages in $mandir/man1" \
    [ "$(ls "$root$mandir/man1" | wc -l)" = "$npages" ]
  check "installed: delayq-top.1" [ -f "$root$mandir/man1/delayq-top.1" ]
fi

# pkg-config sees only the DESTDIR's delayq.pc (hiredis' and msgpack's from the system)
export PKG_CONFIG_SYSROOT_DIR="$root"
export PKG_CONFIG_PATH="$root$libdir/pkgconfig"
ver=$(pkg-config --modversion delayq)
check "pkg-config finds the installed delayq ($ver)" [ -n "$ver" ]
cflags=$(pkg-config --cflags delayq)
check "cflags point into the DESTDIR" sh -c "echo '$cflags' | grep -qF -- '-I$root$incdir'"
sanflags=
[ "$san" != none ] && sanflags="-fsanitize=$san"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror $sanflags $cflags -o "$work/producer" \
  "$src/tests/eco/producer.c" $(pkg-config --libs delayq) 2>"$work/cc.log"
check "producer builds against the shared library" [ $? -eq 0 ] || sed 's/^/# /' "$work/cc.log"
# static: the archive by path, its dependencies from Libs.private/Requires.private
cc -std=c11 -Wall -Wextra -Wpedantic -Werror $sanflags $cflags -o "$work/producer-static" \
  "$src/tests/eco/producer.c" "$root$libdir/libdelayq.a" \
  $(pkg-config --static --libs delayq | sed 's/-ldelayq\b//') 2>"$work/cc-static.log"
check "producer builds against the static library" [ $? -eq 0 ] ||
  sed 's/^/# /' "$work/cc-static.log"
check "the static producer does not need libdelayq.so" \
  sh -c "! readelf -d '$work/producer-static' | grep -q 'libdelayq'"

redis_start
q=t-install-$$
out=$(LD_LIBRARY_PATH="$root$libdir" "$work/producer" "$DELAYQ_URL" "$q" shared-1)
check "shared producer enqueued ($out)" [ "$out" = "shared-1 added" ]
libused=$(LD_LIBRARY_PATH="$root$libdir" ldd "$work/producer" | awk '/libdelayq/ { print $3 }')
check "it ran with the DESTDIR's libdelayq.so ($libused)" \
  sh -c "case '$libused' in '$root$libdir'/*) true ;; *) false ;; esac"
out=$("$work/producer-static" "$DELAYQ_URL" "$q" static-1)
check "static producer enqueued ($out)" [ "$out" = "static-1 added" ]

dq="$root$bindir/delayq"
check "installed delayq --version says $ver" [ "$("$dq" --version)" = "delayq $ver" ]
check "installed delayq sees 2 future tasks" \
  sh -c "'$dq' stats -q '$q' --json | grep -q '\"future\":2,'"
check "and the payload the producer wrote" \
  sh -c "'$dq' show -q '$q' static-1 | grep -qF '|hello from an in|'"

# libdelayq.a: every function delayq.h declares is defined; every global is dq_*
declared=$(grep -oE '\bdq_[a-z0-9_]+\s*\(' "$src/src/delayq.h" | tr -d ' (' | sort -u)
defined=$(nm -g --defined-only "$root$libdir/libdelayq.a" | awk 'NF == 3 { print $3 }' | sort -u)
missing=$(printf '%s\n' "$declared" | while read -r s; do
  printf '%s\n' "$defined" | grep -qx "$s" || echo "$s"; done)
check "libdelayq.a defines all $(printf '%s\n' "$declared" | wc -l) API functions${missing:+ (missing: $missing)}" \
  [ -z "$missing" ]
foreign=$(printf '%s\n' "$defined" | grep -v '^dq_' | tr '\n' ' ')
# a sanitizer build adds its own instrumentation symbols (__odr_asan.dq_...)
[ "$san" != none ] && foreign=$(printf '%s\n' $foreign | grep -vE '^__(odr_)?asan' | tr '\n' ' ')
foreign=${foreign% }
check "libdelayq.a has only dq_ globals${foreign:+ (not: $foreign)}" [ -z "$foreign" ]

# the unit: verified as installed, except that ExecStart's delayq is the DESTDIR's (the
# real path does not exist here) and man finds Documentation= in the DESTDIR
mkdir "$work/unit"
sed "s|$bindir/delayq|$root$bindir/delayq|" "$root$unitdir/delayq-work@.service" \
  >"$work/unit/delayq-work@test.service"
check "the unit's ExecStart is the installed delayq" \
  grep -q "^ExecStart=$bindir/delayq work " "$root$unitdir/delayq-work@.service"
# without the pages, systemd-analyze's Documentation= check would complain
[ "$man" = man ] || sed -i '/^Documentation=/d' "$work/unit/delayq-work@test.service"
MANPATH="$root$mandir" systemd-analyze verify "$work/unit/delayq-work@test.service" \
  >"$work/verify.log" 2>&1
vrc=$?
check "systemd-analyze verify: no complaint (status $vrc)" \
  sh -c "[ $vrc -eq 0 ] && [ ! -s '$work/verify.log' ]" || sed 's/^/# /' "$work/verify.log"

# the unit's command line works: ExecStart with systemd's specifiers and variables
# filled in as systemd would (the example env file's settings, a handler that
# succeeds), run against the private Redis; it does a task, then stops on SIGTERM.
env_example="$root$datadir/doc/delayq/examples/delayq-work.env.example"
for k in DELAYQ_URL DELAYQ_QUEUE DELAYQ_COMMAND DELAYQ_CONCURRENCY; do
  check "the example env file sets $k" grep -q "^$k=" "$env_example"
done
exec_line=$(sed -n 's/^ExecStart=//p' "$work/unit/delayq-work@test.service")
exec_line=$(printf '%s' "$exec_line" | sed -e "s/%H/$(hostname)/g" -e 's/%i/test/g' \
  -e 's/\${DELAYQ_CONCURRENCY}/2/g' -e 's/\$DELAYQ_COMMAND/sh -c true/g')
uq=t-unit-$$
"$dq" enqueue -q "$uq" --json '{}' >/dev/null
# shellcheck disable=SC2086
DELAYQ_QUEUE=$uq spawn $exec_line 2>"$work/unit-worker.log"
upid=$spawned
is_done() { "$dq" stats -q "$uq" --json | grep -q '"done":1,'; }
check "the unit's ExecStart runs a task" wait_for 10000 "the task to be done" is_done ||
  sed 's/^/# /' "$work/unit-worker.log"
kill -TERM "$upid"
wait_for 5000 "the unit's worker to stop on SIGTERM" dead "$upid"
wait "$upid"
check "and stops on SIGTERM with status 0" [ $? -eq 0 ]
finish
