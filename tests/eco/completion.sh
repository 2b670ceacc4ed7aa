#!/bin/bash
# completion.sh: drives the bash completion the way bash does (COMP_LINE, COMP_POINT,
# COMP_WORDS, then the function `complete -p delayq` names) for subcommands, options,
# views, config fields, queue names read from a private redis-server, and the command
# after "--"; checks bash-completion's own loader finds the file by its installed name;
# and that zsh's compinit picks up _delayq.
set -u
. "$(dirname "$0")/lib.sh"
need bash zsh redis-cli python3
comp_src="$src/completions/delayq.bash"
# "delayq" on PATH is the build's, as it would be once installed
mkdir "$work/bin"
ln -s "$bin" "$work/bin/delayq"
PATH="$work/bin:$PATH"
export PATH
unset DELAYQ_URL DELAYQ_QUEUE

# shellcheck source=/dev/null
. "$comp_src"
check "complete -p names _delayq" [ "$(complete -p delayq)" = "complete -F _delayq delayq" ]

# comp LINE: the completions bash would offer at the end of LINE, sorted, one a line
comp() {
  COMP_LINE=$1
  COMP_POINT=${#1}
  read -ra COMP_WORDS <<<"$1"
  [[ $1 == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  fn=$(complete -p delayq | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
  "$fn" delayq "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]:-}"
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
# comp_is LINE EXPECTED...: exactly these completions
comp_is() {
  line=$1
  shift
  got=$(comp "$line" | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || { echo "# '$line': got [$got], want [$want]"; return 1; }
}
# comp_has LINE WORD: WORD is among the completions
comp_has() { comp "$1" | grep -qx -- "$2" || { echo "# '$1' lacks $2"; return 1; }; }

check "delayq re<TAB> -> requeue reschedule resume" comp_is "delayq re" requeue reschedule resume
check "delayq req<TAB> -> requeue" comp_is "delayq req" requeue
check "delayq s<TAB> -> schedule show stats" comp_is "delayq s" schedule show stats
ncmds=$("$bin" --help | sed -n '/^Commands:/,/^$/p' | grep -c '^  [a-z]')
check "delayq <TAB> offers all $ncmds commands" [ "$(comp 'delayq ' | grep -c .)" = "$ncmds" ]
check "delayq me<TAB> -> metrics" comp_is "delayq me" metrics
check "delayq --ver<TAB> -> --version" comp_is "delayq --ver" --version
check "delayq stats --j<TAB> -> --json" comp_is "delayq stats --j" --json
check "delayq stats --max-<TAB>" comp_is "delayq stats --max-" --max-far-future --max-oldest-due
check "delayq work --gr<TAB> -> --grace" comp_is "delayq work --gr" --grace
check "delayq metrics --te<TAB> -> --textfile" comp_is "delayq metrics --te" --textfile
check "delayq ls <TAB> -> the six views (done with done_retention, parked with key_concurrency)" comp_is "delayq ls " done due failed future inflight parked
check "delayq ls f<TAB>" comp_is "delayq ls f" failed future
check "delayq export <TAB> -> the five views" comp_is "delayq export " due failed future inflight parked
check "delayq export failed --m<TAB> -> --match --min-replicas (a global option)" comp_is "delayq export failed --m" --match --min-replicas
check "delayq export failed --match <TAB> -> nothing" comp_is "delayq export failed --match "
check "delayq import --r<TAB> -> --requeue" comp_is "delayq import --r" --requeue
check "delayq im<TAB> -> import" comp_is "delayq im" import
check "delayq work --log-level <TAB>" comp_is "delayq work --log-level " debug error info warn
check "delayq config max_a<TAB> -> max_attempts=" comp_is "delayq config max_a" max_attempts=
check "delayq work -- ech<TAB> offers echo" comp_has "delayq work -q x -- ech" echo
check "delayq enqueue --delay <TAB>: nothing" comp_is "delayq enqueue --delay "

# queue names from Redis: DELAYQ_URL, or the --url on the line
redis_start
"$bin" enqueue -q alpha --json '{}' >/dev/null
"$bin" enqueue -q app:emails --json '{}' >/dev/null
"$bin" enqueue -q beta --json '{}' >/dev/null
check "delayq stats -q <TAB> -> the registry" comp_is "delayq stats -q " alpha app:emails beta
check "delayq stats -q al<TAB> -> alpha" comp_is "delayq stats -q al" alpha
check "--queue=b<TAB> -> beta" comp_is "delayq ls failed --queue=b" beta
# bash replaces only what follows the ":" in app:em, so the reply is the rest
check "-q app:em<TAB> -> emails (after the colon)" comp_is "delayq top -q app:em" emails
url=$DELAYQ_URL
unset DELAYQ_URL
check "no URL: no queues (and no hang)" comp_is "delayq stats -q "
check "--url on the line is used" comp_is "delayq --url $url stats -q a" alpha app:emails
redis_stop
start=$(mono_ms)
comp "delayq --url $url stats -q " >/dev/null
took=$(($(mono_ms) - start))
check "Redis down: queue completion gives up within 2.5 s ($took ms)" [ "$took" -lt 2500 ]

# bash-completion's loader finds the file by the name it is installed under
if [ -f /usr/share/bash-completion/bash_completion ]; then
  mkdir -p "$work/share/bash-completion/completions"
  cp "$comp_src" "$work/share/bash-completion/completions/delayq"
  loaded=$(XDG_DATA_DIRS="$work/share" BASH_COMPLETION_USER_DIR="$work/none" \
    bash --norc --noprofile -c '. /usr/share/bash-completion/bash_completion
    __load_completion delayq && complete -p delayq' 2>&1)
  check "bash-completion loads it on demand ($loaded)" [ "$loaded" = "complete -F _delayq delayq" ]
else
  bad "bash-completion is not installed (see .ci/deps)"
fi

# zsh: the file parses, and compinit registers _delayq for delayq
mkdir "$work/zfunc"
cp "$src/completions/_delayq" "$work/zfunc/_delayq"
check "zsh -n _delayq" zsh -n "$work/zfunc/_delayq"
zcomp=$(HOME="$work" zsh -fc "fpath=('$work/zfunc' \$fpath); autoload -Uz compinit;
  compinit -u -d '$work/zcompdump'; print -r -- \${_comps[delayq]}" 2>&1)
check "zsh compinit maps delayq to _delayq ($zcomp)" [ "$zcomp" = _delayq ]
# profiles: the names delayq profiles lists, and the command after --profile NAME
mkdir -p "$work/xdg/delayq"
printf '[prod]\nurl = redis://127.0.0.1:1\n[dev.2]\nqueue = emails\n' >"$work/xdg/delayq/config"
chmod 600 "$work/xdg/delayq/config"
export XDG_CONFIG_HOME="$work/xdg"
check "delayq --profile <TAB> -> the profiles" comp_is "delayq --profile " dev.2 prod
check "delayq --profile prod s<TAB> -> schedule show stats" comp_is "delayq --profile prod s" schedule show stats
check "delayq --p<TAB> -> --profile" comp_is "delayq --p" --profile
unset XDG_CONFIG_HOME

finish
