#!/bin/sh
# profiles.sh: connection profiles ($XDG_CONFIG_HOME/delayq/config) through the delayq
# command against a real redis-server with an ACL user: a profile connects (url, user,
# password-file, queue), DELAYQ_PROFILE chooses one, variables override the profile and
# flags override both, the permission checks refuse (exit 2, with the chmod), bad lines
# name file:line, `delayq profiles` never prints a secret, and read-only opens top
# read-only (tmux).
set -u
. "${DQ_SOURCE_ROOT:?}/tests/eco/lib.sh"
need redis-cli tmux

redis_start
unset DELAYQ_URL DELAYQ_QUEUE DELAYQ_PASSWORD DELAYQ_PROFILE
r() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
r ACL SETUSER alice on '>alice-pw-7' '~*' '&*' +@all >/dev/null
export XDG_CONFIG_HOME="$work/cfg"
mkdir -p "$XDG_CONFIG_HOME/delayq"
cfg="$XDG_CONFIG_HOME/delayq/config"
printf 'alice-pw-7\n' >"$work/pw"
chmod 600 "$work/pw"
cat >"$cfg" <<CFG
# test profiles
[prod]
url = redis://127.0.0.1:$redis_port
user = alice
password-file = $work/pw
queue = emails

[other]
url = redis://127.0.0.1:1
queue = invoices

[ro]
url = redis://127.0.0.1:$redis_port
user = alice
password-command = cat $work/pw
read-only = yes

[tlsy]
url = redis://127.0.0.1:$redis_port
tls-ca = $work/ca.crt
CFG
chmod 600 "$cfg"
r CONFIG SET requirepass nobody-knows >/dev/null # only alice may connect now

# dq ARGS...: runs delayq; out, err, rc
dq() {
  "$bin" "$@" >"$work/out" 2>"$work/err" </dev/null
  rc=$?
}
expect() { # expect NAME RC GREP-IN-OUT-OR-ERR
  if [ "$rc" -eq "$2" ] && cat "$work/out" "$work/err" | grep -qF -- "$3"; then ok "$1"; else
    bad "$1 (rc $rc, wanted $2 and \"$3\"): $(cat "$work/out" "$work/err" | head -3)"
  fi
}

dq --profile prod enqueue --json '{"a":1}'
expect "--profile prod connects as its user with its password-file" 0 1
# the queues the stats below read, made the way a producer would (stats refuses a queue
# the server does not know)
for q in invoices jobs audit default; do
  dq --profile prod enqueue -q "$q" --json 1
  expect "... and makes queue $q" 0 ""
done
dq --profile prod stats
expect "... to its queue" 0 "queue        emails at 127.0.0.1:$redis_port"
dq --profile=prod stats
expect "--profile=NAME works too" 0 "queue        emails"
DELAYQ_PROFILE=prod dq stats
expect "DELAYQ_PROFILE chooses the profile" 0 "queue        emails"
DELAYQ_PROFILE=other dq --profile prod stats
expect "--profile overrides DELAYQ_PROFILE" 0 "queue        emails"
dq --profile prod stats -q invoices
expect "-q overrides the profile's queue" 0 "queue        invoices"
DELAYQ_QUEUE=jobs dq --profile prod stats
expect "DELAYQ_QUEUE overrides the profile's queue" 0 "queue        jobs"
DELAYQ_QUEUE=jobs dq --profile prod stats -q audit
expect "... and -q overrides DELAYQ_QUEUE" 0 "queue        audit"
DELAYQ_URL=redis://127.0.0.1:1 dq --profile prod stats
expect "DELAYQ_URL overrides the profile's url" 3 "127.0.0.1:1"
DELAYQ_URL=redis://127.0.0.1:1 dq --profile prod stats --url "redis://127.0.0.1:$redis_port"
expect "--url overrides DELAYQ_URL (the profile's user and password still apply)" 0 "queue        emails"
DELAYQ_PASSWORD=wrong dq --profile prod stats
expect "DELAYQ_PASSWORD overrides the profile's password" 3 "WRONGPASS"
dq --profile ro stats
expect "password-command gives the password" 0 "queue        default"
dq --profile other stats
expect "a profile's url is used (unreachable here: exit 3)" 3 "127.0.0.1:1"
dq --profile tlsy stats
expect "the profile's tls-ca reaches the connection (and a redis:// URL refuses it)" 2 "tls options need a rediss:// URL"
dq --profile nope stats
expect "an unknown profile is exit 2, naming the file" 2 "profile \"nope\" is not in $cfg"
dq stats --profile prod
expect "--profile after the command says where it goes" 2 "--profile goes before the command: delayq --profile NAME stats"
dq --profile
expect "--profile without a name" 2 "--profile needs a name"

dq profiles
expect "delayq profiles lists them" 0 "prod  redis://127.0.0.1:$redis_port  user alice  password from password-file  queue emails"
check "... with read-only" grep -q "ro  .*password from password-command.*read-only" "$work/out"
check "... and never a secret" not grep -q "alice-pw-7" "$work/out"
DELAYQ_PROFILE=prod dq profiles
check "... marking the one in use" grep -q '^\* prod ' "$work/out"

# permissions: a password in a file others may read; a password-file others may read;
# a file others may change
cp "$cfg" "$work/cfg.good"
printf '[p]\nurl = redis://127.0.0.1:%s\nuser = alice\npassword = alice-pw-7\n' "$redis_port" >"$cfg"
chmod 644 "$cfg"
dq --profile p stats
expect "a password in a file others may read is refused" 2 "it holds a password (password = of profile p), and its permissions (644) let others read it; refusing to use it: chmod 600 $cfg"
chmod 600 "$cfg"
dq --profile p stats
expect "... and used after chmod 600" 0 "queue        default"
dq profiles
expect "... (listed as: in the file)" 0 "password in the file"
check "... but never printed" not grep -q "alice-pw-7" "$work/out"
# the same password inside the url: refused the same way, whatever the mode lets
# others do (group or other) and whether or not the url parses
for mode in 644 640 604; do
  printf '[up]\nurl = redis://alice:alice-pw-7@127.0.0.1:%s\n' "$redis_port" >"$cfg"
  chmod $mode "$cfg"
  dq --profile up stats
  expect "a password in the url of a file others may read ($mode) is refused" 2 "it holds a password (in the url of profile up), and its permissions ($mode) let others read it; refusing to use it: chmod 600 $cfg"
  dq profiles
  expect "... delayq profiles too ($mode)" 2 "refusing to use it: chmod 600 $cfg"
done
printf '[up]\nurl = redis://alice:alice-pw-7@127.0.0.1:%s:bad\n' "$redis_port" >"$cfg"
dq profiles
expect "... a url that does not parse counts too" 2 "in the url of profile up"
check "... and the message never quotes it" not grep -q "alice-pw-7" "$work/err"
printf '[up]\nurl = redis://alice:alice-pw-7@127.0.0.1:%s\n' "$redis_port" >"$cfg"
chmod 600 "$cfg"
dq --profile up stats
expect "... and used after chmod 600" 0 "queue        default"
dq profiles
expect "... listed as: in the url" 0 "up  redis://127.0.0.1:$redis_port  password in the url"
check "... but never printed" not grep -q "alice-pw-7" "$work/out"
printf '[nopw]\nurl = redis://alice@127.0.0.1:%s\n' "$redis_port" >"$cfg"
chmod 644 "$cfg"
dq profiles
expect "a url with a user and no password may be read by others" 0 "nopw  redis://127.0.0.1:$redis_port  password none"
cp "$work/cfg.good" "$cfg"
chmod 644 "$cfg" # no password inside: others may read it
chmod 644 "$work/pw"
dq --profile prod stats
expect "a password-file others may read is refused" 2 "$work/pw: it is the password-file of a profile, and its permissions (644) let others read it; refusing to use it: chmod 600 $work/pw"
chmod 600 "$work/pw"
chmod 664 "$cfg"
dq --profile prod stats
expect "a file others may change is refused" 2 "others may change this file"
chmod 600 "$cfg"
printf '[p]\nurl = redis://x\nqueu = emails\n' >"$cfg"
dq --profile p stats
expect "an unknown key names file:line" 2 "$cfg:3: unknown key \"queu\""
printf '[p]\nurl redis://x\n' >"$cfg"
dq profiles
expect "a bad line names file:line" 2 "$cfg:2: expected \"key = value\""
rm "$cfg"
dq profiles
expect "no file: delayq profiles says so" 0 "no profiles: $cfg does not exist"
cp "$work/cfg.good" "$cfg"

# read-only = yes: top opens read-only and says why
tm() { tmux -L "dqprof$$" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT
tm -f /dev/null new-session -d -s top -x 100 -y 30 \
  "XDG_CONFIG_HOME=$XDG_CONFIG_HOME $bin --profile ro top -q emails; sleep 30"
screen_has() { tm capture-pane -p -t top | grep -qF -- "$1"; }
if wait_for 15000 "top read-only" screen_has "read-only: profile ro says read-only"; then
  ok "read-only = yes opens top read-only, and says why"
else bad "read-only profile: $(tm capture-pane -p -t top | tail -2)"; fi
check "... with the READ-ONLY badge" screen_has "READ-ONLY"
tm kill-server 2>/dev/null
finish
