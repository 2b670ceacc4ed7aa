# sentinel_lib.sh: one master, one replica and three sentinels on free loopback ports
# (sourced after tests/eco/lib.sh, whose spawn/cleanup stop them by PID). Sentinels
# decide fast (down-after 1 s) so that a failover fits a CI run; every wait is a
# deadline poll.
server=${DQ_REDIS_SERVER:-redis-server}
master_name=mymaster

# node_start NAME PORT [ARGS...]: a redis-server; its PID in node_pid_NAME
node_start() {
  n=$1 p=$2
  shift 2
  mkdir -p "$work/$n"
  spawn "$server" --port "$p" --bind 127.0.0.1 --dir "$work/$n" --save '' --appendonly no \
    --daemonize no --logfile "$work/$n/redis.log" --repl-diskless-sync-delay 0 "$@"
  eval "node_pid_$n=$spawned"
}
port_ping() { [ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = PONG ]; }
# sentinel_field PORT FIELD: a field of SENTINEL MASTER mymaster as that sentinel sees it
sentinel_field() {
  redis-cli -h 127.0.0.1 -p "$1" sentinel master "$master_name" 2>/dev/null |
    awk -v f="$2" 'prev == f { print; exit } { prev = $0 }'
}
sentinel_ready() {
  for sp in $sentinel_ports; do
    [ "$(sentinel_field "$sp" num-slaves)" = 1 ] || return 1
    [ "$(sentinel_field "$sp" num-other-sentinels)" = 2 ] || return 1
  done
}
# the port every sentinel names as the master
master_port_is() {
  for sp in $sentinel_ports; do
    got=$(redis-cli -h 127.0.0.1 -p "$sp" sentinel get-master-addr-by-name "$master_name" \
      2>/dev/null | sed -n 2p)
    [ "$got" = "$1" ] || return 1
  done
}
# in_sync PORT: the replica at PORT has finished its sync with its master (a replica
# still syncing holds nothing yet, and the sentinels may still promote it)
in_sync() {
  redis-cli -h 127.0.0.1 -p "$1" info replication 2>/dev/null | grep -q '^master_link_status:up'
}
role_of() { redis-cli -h 127.0.0.1 -p "$1" role 2>/dev/null | head -1; }

# sentinel_setup [nosync [MASTER_ARGS...]]: starts the five servers and waits until the
# sentinels know the replica and each other, and (unless nosync) until the replica is
# in sync; sets master_port, replica_port, sentinel_ports, SURL
sentinel_setup() {
  sync=yes
  [ "${1:-}" = nosync ] && sync=no && shift
  master_port=$(free_port)
  replica_port=$(free_port)
  node_start master "$master_port" "$@"
  node_start replica "$replica_port" --replicaof 127.0.0.1 "$master_port"
  wait_for 5000 "master" port_ping "$master_port" || return 1
  wait_for 5000 "replica" port_ping "$replica_port" || return 1
  sentinel_ports=""
  list=""
  for k in 1 2 3; do
    sp=$(free_port)
    mkdir -p "$work/s$k"
    cat >"$work/s$k/sentinel.conf" <<EOC
port $sp
bind 127.0.0.1
dir $work/s$k
logfile $work/s$k/sentinel.log
sentinel monitor $master_name 127.0.0.1 $master_port 2
sentinel down-after-milliseconds $master_name 1000
sentinel failover-timeout $master_name 4000
sentinel parallel-syncs $master_name 1
EOC
    spawn "$server" "$work/s$k/sentinel.conf" --sentinel
    eval "sentinel_pid_$k=$spawned"
    sentinel_ports="$sentinel_ports $sp"
    list="$list${list:+,}127.0.0.1:$sp"
  done
  for sp in $sentinel_ports; do wait_for 5000 "sentinel $sp" port_ping "$sp" || return 1; done
  wait_for 30000 "sentinels to find the replica and each other" sentinel_ready || return 1
  [ $sync = no ] || wait_for 30000 "the replica's first sync" in_sync "$replica_port" || return 1
  SURL="redis-sentinel://$list/$master_name"
}

# failover_kill: SIGKILLs the master and waits for the sentinels to promote the replica
failover_kill() {
  kill -KILL "$node_pid_master"
  wait "$node_pid_master" 2>/dev/null
  wait_for 30000 "the sentinels to promote the replica" master_port_is "$replica_port" &&
    wait_for 10000 "the replica to become master" eval '[ "$(role_of "$replica_port")" = master ]'
}
