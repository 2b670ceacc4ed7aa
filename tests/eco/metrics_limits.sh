#!/bin/sh
# metrics_limits.sh: delayq metrics survives its network (docs/SECURITY.md, "The
# metrics exporter"): 300 connections that send half a request line and stay open, then
# 300 that send half and close, leave /metrics answering within 1 s; a burst of 50 GETs
# costs at most one scrape per --cache interval and 20 HEADs none (FCALL_RO counted in
# INFO commandstats); --auth-file (bearer and basic) and TLS; the warning beyond
# loopback; a port outside 0..65535 refused.
set -u
. "$(dirname "$0")/lib.sh"
need curl redis-cli python3 openssl
redis_start
rcli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
q=t-mlim-$$
for n in 1 2 3; do "$bin" enqueue -q "$q-$n" --json '{}' >/dev/null; done
# FCALL_RO calls so far (two per queue and scrape)
fcalls() {
  rcli info commandstats | tr -d '\r' |
    sed -n 's/^cmdstat_fcall_ro:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}

# start_srv LOG ARGS...: an exporter on a port the kernel picks; sets spid, base
start_srv() {
  log=$1
  shift
  spawn "$bin" metrics --listen 127.0.0.1:0 "$@" 2>"$log"
  spid=$spawned
  wait_for 5000 "the exporter's port in $log" grep -q 'port [1-9]' "$log" ||
    { bad "exporter started"; cat "$log" >&2; }
  mport=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$log" | head -1)
}
code() { curl -s -o "$work/body" -w '%{http_code}' --max-time 5 "$@"; }

# bad ports: exit 2, naming the field and the range
for p in 99999 65536 -1 80x 123456789012; do
  # (timeout: a build that takes the port listens instead of exiting)
  timeout 5 "$bin" metrics --listen "127.0.0.1:$p" 2>"$work/port.err" >/dev/null
  rc=$?
  check "--listen 127.0.0.1:$p: exit 2 (got $rc)" [ "$rc" -eq 2 ]
  check "--listen 127.0.0.1:$p: names the port and 0..65535" \
    grep -q "port \"$p\" is not in 0..65535" "$work/port.err"
done

start_srv "$work/srv.log" --cache 5s
base="http://127.0.0.1:$mport"
check "GET /metrics: 200" [ "$(code "$base/metrics")" = 200 ]

# 300 connections that send half a request line and stay open
cat >"$work/partial.py" <<'EOF'
import socket, sys, time
port, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
held = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.send(b"GET /metr")
    if mode == "close":
        s.close()
    else:
        held.append(s)
print("ready", flush=True)
if mode == "hold":
    sys.stdin.read()  # until the test closes our stdin
EOF
# get_within MS: GET /metrics answers 200 within MS ms (one try, no retry)
get_within() {
  t0=$(mono_ms)
  c=$(curl -s -o /dev/null -w '%{http_code}' --max-time "$(echo "$1" | awk '{print $1 / 1000}')" \
    "$base/metrics")
  el=$(($(mono_ms) - t0))
  echo "# GET /metrics: $c in $el ms"
  [ "$c" = 200 ]
}
mkfifo "$work/hold.in"
python3 "$work/partial.py" "$mport" 300 hold <"$work/hold.in" >"$work/hold.out" &
hpid=$!
pids="$pids $hpid"
exec 7>"$work/hold.in"
wait_for 20000 "300 partial connections held" grep -q ready "$work/hold.out" ||
  bad "opened 300 partial connections"
check "300 partial connections held open: /metrics answers within 1 s" get_within 1000
exec 7>&-
wait "$hpid"
# 300 that send half and close
python3 "$work/partial.py" "$mport" 300 close >/dev/null
check "300 partial connections closed: /metrics answers within 1 s" get_within 1000
check "and again a moment later" get_within 1000

# a burst of 50 GETs, right after a GET that scraped (the cache is 5 s here): at most
# one scrape per 5 s, 2 FCALL_RO per queue and scrape
scraped() { g0=$(fcalls); curl -s -o /dev/null "$base/metrics"; [ "$(fcalls)" -gt "$g0" ]; }
wait_for 10000 "a GET that scrapes" scraped || bad "a GET scraped once the cache expired"
f0=$(fcalls)
t0=$(mono_ms)
n=0
while [ $n -lt 50 ]; do curl -s -o /dev/null --max-time 5 "$base/metrics"; n=$((n + 1)); done
el=$(($(mono_ms) - t0))
f1=$(fcalls)
scr=$(((f1 - f0) / 6))
echo "# 50 GETs in $el ms: $((f1 - f0)) FCALL_RO, $scr scrapes"
check "50 GETs over $el ms: at most $((el / 5000 + 1)) scrapes (got $scr)" \
  [ "$scr" -le $((el / 5000 + 1)) ]
code "$base/metrics" >/dev/null
check "a cached answer is the exposition" grep -q "^delayq_tasks{queue=\"$q-1\",state=\"due\"} 1" \
  "$work/body"
f0=$(fcalls)
n=0
while [ $n -lt 20 ]; do curl -s -o /dev/null -I --max-time 5 "$base/metrics"; n=$((n + 1)); done
f1=$(fcalls)
check "20 HEADs: no scrape ($((f1 - f0)) FCALL_RO)" [ "$f1" -eq "$f0" ]
check "HEAD: 200 with the content type" sh -c "curl -s -I '$base/metrics' | tr -d '\r' |
  grep -qi '^content-type: text/plain; version=0.0.4'"
stop_pid "$spid"

# --cache 0: every GET scrapes
start_srv "$work/srv0.log" --cache 0
base="http://127.0.0.1:$mport"
f0=$(fcalls)
for n in 1 2 3; do curl -s -o /dev/null "$base/metrics"; done
f1=$(fcalls)
check "--cache 0: 3 GETs, 3 scrapes ($((f1 - f0)) FCALL_RO)" [ $((f1 - f0)) -eq 18 ]
stop_pid "$spid"

# --auth-file: a bearer token, then user:password (basic auth); 0644 refused
printf 's3cret-token\n' >"$work/token"
chmod 644 "$work/token"
timeout 5 "$bin" metrics --listen 127.0.0.1:0 --auth-file "$work/token" 2>"$work/perm.err"
check "--auth-file readable by others: exit 2" [ $? -eq 2 ]
check "--auth-file readable by others: says chmod 600" grep -q "chmod 600" "$work/perm.err"
chmod 600 "$work/token"
start_srv "$work/srva.log" --auth-file "$work/token"
base="http://127.0.0.1:$mport"
check "bearer: no credentials: 401" [ "$(code "$base/metrics")" = 401 ]
bearer() { code -H "Authorization: Bearer $1" "$base/metrics"; }
check "bearer: a wrong token: 401" [ "$(bearer s3cret-tokex)" = 401 ]
check "bearer: a longer token: 401" [ "$(bearer s3cret-token2)" = 401 ]
check "bearer: the token: 200" [ "$(bearer s3cret-token)" = 200 ]
check "bearer: the exposition" grep -q "^delayq_up 1" "$work/body"
f0=$(fcalls)
code "$base/metrics" >/dev/null
check "a refused request costs no scrape" [ "$(fcalls)" -eq "$f0" ]
check "the secret is not logged" not grep -q s3cret "$work/srva.log"
stop_pid "$spid"
printf 'prom:pa55word\n' >"$work/basic"
chmod 600 "$work/basic"
start_srv "$work/srvb.log" --auth-file "$work/basic"
base="http://127.0.0.1:$mport"
check "basic: no credentials: 401" [ "$(code "$base/metrics")" = 401 ]
check "basic: WWW-Authenticate: Basic" \
  sh -c "curl -s -I '$base/metrics' | tr -d '\r' | grep -qi '^www-authenticate: Basic'"
check "basic: a wrong password: 401" [ "$(code -u prom:pa55wore "$base/metrics")" = 401 ]
check "basic: user and password: 200" [ "$(code -u prom:pa55word "$base/metrics")" = 200 ]
stop_pid "$spid"

# TLS (libmicrohttpd with GnuTLS): a self-signed certificate for 127.0.0.1
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
  -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
chmod 600 "$work/key.pem"
timeout 5 "$bin" metrics --listen 127.0.0.1:0 --http-tls-cert "$work/cert.pem" \
  2>"$work/tls1.err"
check "--http-tls-cert without --http-tls-key: exit 2" [ $? -eq 2 ]
start_srv "$work/srvt.log" --http-tls-cert "$work/cert.pem" --http-tls-key "$work/key.pem" \
  --auth-file "$work/token"
check "TLS: the log says https" grep -q "https with auth" "$work/srvt.log"
check "TLS: GET with the CA and the token: 200" \
  [ "$(code --cacert "$work/cert.pem" -H 'Authorization: Bearer s3cret-token' \
    "https://127.0.0.1:$mport/metrics")" = 200 ]
check "TLS: plain HTTP gets no exposition" \
  not sh -c "curl -s --max-time 2 'http://127.0.0.1:$mport/metrics' | grep -q delayq_up"
stop_pid "$spid"

# beyond loopback without auth or TLS: a warning (192.0.2.1, TEST-NET-1, is no local
# address: the bind fails after the warning, so nothing listens beyond loopback here)
timeout 5 "$bin" metrics --listen 192.0.2.1:0 2>"$work/warn.err" >/dev/null
check "192.0.2.1: warns without --auth-file or TLS" \
  grep -q "warning: serving /metrics beyond loopback on 192.0.2.1:0 without --auth-file or TLS" \
  "$work/warn.err"
start_srv "$work/srvl.log"
check "loopback: no warning" not grep -q warning "$work/srvl.log"
stop_pid "$spid"
finish
