#!/bin/sh
# top_tls.sh: delayq top over rediss://, in tmux, against a private TLS-only
# redis-server on a free loopback port (certificates made here with openssl): it shows
# the queue, carries on across a restart of Redis on the same port, and a wrong CA ends
# it before the screen opens, with exit 3 and the reason. A client key others may read
# is warned about (stderr, and top's status line), an encrypted one refused with how to
# decrypt it, and --tls-insecure shows an INSECURE badge for as long as top runs. Every
# expectation is a deadline poll, never a sleep.
set -u
bin=${DELAYQ_BIN:?}
server=${DQ_REDIS_SERVER:-redis-server}
work=$(mktemp -d)
sock="dqtls$$"
# one tmux server per session (next_server): a session is never added to a server that
# is exiting (tmux 3.3a crashes on that)
srv=0
tm() { tmux -L "$sock.$srv" "$@"; }
next_server() {
  tm kill-server 2>/dev/null
  srv=$((srv + 1))
}
redis_pid=
cleanup() {
  i=0
  while [ $i -le $srv ]; do tmux -L "$sock.$i" kill-server 2>/dev/null; i=$((i + 1)); done
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "not ok - $1"; tm capture-pane -p -t top 2>/dev/null | sed 's/^/# /'; }
wait_for() {
  i=0
  while [ $i -lt 100 ]; do
    "$@" && return 0
    i=$((i + 1))
    sleep 0.05
  done
  return 1
}
screen_has() { tm capture-pane -p -t top | grep -qF -- "$1"; }

# certificates: a CA, a server certificate for 127.0.0.1 signed by it, an unrelated CA
. "$(dirname "$0")/../harness/certs.sh"
make_certs "$work" || { echo "not ok - openssl"; cat "$work/openssl.log"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_redis() {
  "$server" --port 0 --tls-port "$port" --bind 127.0.0.1 --dir "$work" --save "" \
    --appendonly yes --appendfsync always --unixsocket "$work/redis.sock" \
    --unixsocketperm 700 --tls-cert-file "$work/server.crt" --tls-key-file "$work/server.key" \
    --tls-ca-cert-file "$work/ca.crt" --tls-auth-clients no --logfile "$work/redis.log" &
  redis_pid=$!
}
redis_up() { redis-cli -s "$work/redis.sock" ping 2>/dev/null | grep -q PONG; }
start_redis
wait_for redis_up || { echo "not ok - redis-server with TLS did not start"; cat "$work/redis.log"; exit 1; }

export DELAYQ_URL="rediss://127.0.0.1:$port" DELAYQ_TLS_CA="$work/ca.crt" DELAYQ_QUEUE=tlsq
for i in 1 2 3; do "$bin" enqueue --json "{\"n\":$i}" >/dev/null || bad "enqueue $i"; done

tm -f /dev/null new-session -d -s top -x 120 -y 30 "$bin top --refresh 250ms; sleep 30"
if wait_for screen_has "[1] Due (3)" && screen_has "127.0.0.1:$port"; then
  ok "top over TLS shows the 3 due tasks"
else bad "top over TLS"; fi

# Redis restarted on the same TLS port under the open inspector
kill "$redis_pid" && wait "$redis_pid" 2>/dev/null
redis_pid=
start_redis
wait_for redis_up || bad "redis-server restart"
for i in 4 5; do
  enqueued() { "$bin" enqueue --json "{\"n\":$i}" >/dev/null 2>&1; }
  wait_for enqueued || bad "enqueue $i after the restart"
done
if wait_for screen_has "[1] Due (5)"; then ok "top carries on across a Redis restart"
else bad "top after the restart"; fi
tm send-keys -t top q
gone() { ! screen_has "[1] Due"; }
if wait_for gone; then ok "q quits"; else bad "q"; fi
next_server

# a wrong CA: exit 3 with the reason, before any screen
out=$(DELAYQ_TLS_CA="$work/other-ca.crt" "$bin" top </dev/null 2>&1)
rc=$?
if [ $rc -eq 3 ] && echo "$out" | grep -q "tls: certificate verify failed"; then
  ok "a wrong CA ends top with exit 3 and the reason"
else bad "wrong CA: exit $rc: $out"; fi

# client keys (the server asks for a certificate but does not require one: the server's
# own pair is a valid client identity, clientAuth included)
cp "$work/server.key" "$work/open.key"
chmod 644 "$work/open.key"
out=$("$bin" stats --tls-cert "$work/server.crt" --tls-key "$work/open.key" 2>&1)
rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -qF "warning: tls-key $work/open.key: its permissions (644) let others read the private key; chmod 600 it"; then
  ok "a client key others may read works, with a warning"
else bad "key 644: exit $rc: $out"; fi
chmod 600 "$work/open.key"
out=$("$bin" stats --tls-cert "$work/server.crt" --tls-key "$work/open.key" 2>&1)
if ! echo "$out" | grep -q "warning"; then ok "... and no warning at 600"; else bad "key 600: $out"; fi
openssl pkey -in "$work/server.key" -aes256 -passout pass:hunter2 -out "$work/enc.key" 2>>"$work/openssl.log"
chmod 600 "$work/enc.key"
out=$("$bin" stats --tls-cert "$work/server.crt" --tls-key "$work/enc.key" </dev/null 2>&1)
rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -qF "tls-key: $work/enc.key: the key is encrypted; delayq cannot prompt for a passphrase: decrypt it with openssl pkey"; then
  ok "an encrypted key is refused with how to decrypt it (exit 2)"
else bad "encrypted key: exit $rc: $out"; fi
chmod 644 "$work/open.key"
tm -f /dev/null new-session -d -s top -x 160 -y 30 \
  "$bin top --tls-cert $work/server.crt --tls-key $work/open.key 2>/dev/null; sleep 30"
if wait_for screen_has "warning: tls-key $work/open.key: its permissions (644)"; then
  ok "top shows the key warning on its status line"
else bad "top key warning"; fi
next_server

# --tls-insecure: a badge inside the inspector, not only a line before it opens
tm -f /dev/null new-session -d -s top -x 140 -y 30 "$bin top --tls-insecure 2>/dev/null; sleep 30"
if wait_for screen_has "[1] Due (5)" && screen_has " INSECURE"; then
  ok "top --tls-insecure shows the INSECURE badge"
else bad "insecure badge"; fi
next_server
tm -f /dev/null new-session -d -s top -x 140 -y 30 "$bin top 2>/dev/null; sleep 30"
if wait_for screen_has "[1] Due (5)" && ! screen_has "INSECURE"; then
  ok "... and only then"
else bad "badge without --tls-insecure"; fi
next_server

echo "# $passed passed, $failed failed"
[ $failed -eq 0 ]
