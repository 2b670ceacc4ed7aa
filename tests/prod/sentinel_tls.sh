#!/bin/sh
# sentinel_tls.sh: rediss-sentinel:// against a TLS-only master and a TLS-only sentinel
# (certificates made here with openssl, for 127.0.0.1): the master is found and used
# with the --tls-* options checking both servers; a wrong CA is exit 3 with the reason;
# plain redis-sentinel:// to the TLS sentinel fails with exit 3.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
need redis-cli openssl
server=${DQ_REDIS_SERVER:-redis-server}

. "$here/../harness/certs.sh"
make_certs "$work" || { bad "openssl"; cat "$work/openssl.log"; finish; exit 1; }

tls="--tls-cert-file $work/server.crt --tls-key-file $work/server.key --tls-ca-cert-file $work/ca.crt --tls-auth-clients no"
mport=$(free_port)
sport=$(free_port)
mkdir -p "$work/m" "$work/s"
# shellcheck disable=SC2086
spawn "$server" --port 0 --tls-port "$mport" --bind 127.0.0.1 --dir "$work/m" --save '' \
  --appendonly no --logfile "$work/m/redis.log" $tls
cat >"$work/s/sentinel.conf" <<EOC
port 0
tls-port $sport
bind 127.0.0.1
dir $work/s
logfile $work/s/sentinel.log
tls-cert-file $work/server.crt
tls-key-file $work/server.key
tls-ca-cert-file $work/ca.crt
tls-auth-clients no
tls-replication yes
sentinel monitor mymaster 127.0.0.1 $mport 1
sentinel down-after-milliseconds mymaster 1000
EOC
spawn "$server" "$work/s/sentinel.conf" --sentinel
tping() { [ "$(redis-cli --tls --cacert "$work/ca.crt" -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = PONG ]; }
check "TLS master up" wait_for 10000 "master" tping "$mport"
check "TLS sentinel up" wait_for 10000 "sentinel" tping "$sport"

url="rediss-sentinel://127.0.0.1:$sport/mymaster"
check "enqueue over rediss-sentinel://" sh -c \
  '"$1" enqueue -q tq --url "$2" --tls-ca "$3" --json 1 >/dev/null' _ "$bin" "$url" "$work/ca.crt"
# (after the enqueue: stats refuses a queue the server does not know)
out=$("$bin" stats -q tq --url "$url" --tls-ca "$work/ca.crt" 2>&1)
check "rediss-sentinel:// finds the TLS master, both certificates checked" \
  sh -c 'echo "$1" | grep -q "at 127.0.0.1:$2 via sentinel mymaster"' _ "$out" "$mport" ||
  echo "# $out"
out=$("$bin" stats -q tq --url "$url" --tls-ca "$work/other-ca.crt" 2>&1)
check "a wrong CA: exit 3 with the reason" \
  sh -c '[ "$1" -eq 3 ] && echo "$2" | grep -q "certificate verify failed"' _ $? "$out" ||
  echo "# $out"
out=$("$bin" stats -q tq --timeout 1s --url "redis-sentinel://127.0.0.1:$sport/mymaster" 2>&1)
check "plain redis-sentinel:// to a TLS sentinel: exit 3" [ $? -eq 3 ] || echo "# $out"
finish
