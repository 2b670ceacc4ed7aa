# bash completion for delayq. Commands come from `delayq --help`, options, which of
# them take a value and an enum's words from `delayq help --specs` (the tables the
# program parses with, no Redis: they can never drift from the program); queue
# names from `delayq queues --names` with a 1 s timeout, against the --url on the line
# or $DELAYQ_URL. Installed as "delayq" in bash-completion's completionsdir.

# the subcommands of delayq --help
_delayq_commands()
{
    "$1" --help 2>/dev/null | awk '/^Commands:/ { c = 1; next } c && /^$/ { exit }
        c && /^  [a-z]/ { print $1 }'
}

# every -x / --long option of command $2 and the global ones (--profile goes before
# the command), from help --specs: "CMD --long -x ARG [WORDS]" lines
_delayq_options()
{
    "$1" help --specs 2>/dev/null | awk -v c="$2" '($1 == c || $1 == "global") && NF >= 4 &&
        $2 != "--profile" { print $2; if ($3 != "-") print $3 }' | sort -u
}

# the help --specs line of option $3 for command $2 ("" when it is none)
_delayq_spec()
{
    "$1" help --specs 2>/dev/null | awk -v c="$2" -v o="$3" '($1 == c || $1 == "global") &&
        NF >= 4 && ($2 == o || $3 == o) { print; exit }'
}

# the profile names `delayq profiles` lists (no Redis)
_delayq_profiles()
{
    "$1" profiles 2>/dev/null | sed -n 's/^[* ] \([A-Za-z0-9._-]*\)  .*/\1/p'
}

# the registered queues; nothing when Redis does not answer within a second
_delayq_queues()
{
    local prog=$1 url=$2
    "$prog" queues --names --timeout 1s ${url:+--url "$url"} 2>/dev/null
}

_delayq()
{
    # Words from the line itself, split at blanks: COMP_WORDS also splits at ":" and
    # "=", which would cut URLs and queue names such as app:emails in pieces.
    local line=${COMP_LINE:0:COMP_POINT} prog=${COMP_WORDS[0]}
    local -a words
    local cur prev cmd="" url="" i w dashdash=0 n
    read -ra words <<<"$line"
    [[ $line == *[[:blank:]] || ${#words[@]} -eq 0 ]] && words+=("")
    n=$((${#words[@]} - 1))
    cur=${words[n]}
    prev=${words[n - 1]}
    COMPREPLY=()
    # "--opt=value" completes the value
    if [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        cur=${cur#*=}
    fi

    # the subcommand: the first word that is neither an option nor an option's value
    for ((i = 1; i < n; i++)); do
        w=${words[i]}
        case $w in
        --url | --who | --timeout | --min-replicas | -q | --queue | --profile)
            [[ $w == --url ]] && url=${words[i + 1]}
            ((i++))
            ;;
        --url=*) url=${w#--url=} ;;
        --) [[ -n $cmd ]] && { dashdash=$i; break; } ;;
        -*) ;;
        *) [[ -z $cmd ]] && cmd=$w ;;
        esac
    done
    [[ -z $url ]] && url=${DELAYQ_URL:-}

    if [[ $dashdash -gt 0 ]]; then
        # delayq work ... -- CMD ARGS: a command, then files
        if [[ $((n - dashdash)) -eq 1 ]]; then
            mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
    fi

    case $prev in
    -q | --queue | --forget)
        mapfile -t COMPREPLY < <(compgen -W "$(_delayq_queues "$prog" "$url")" -- "$cur")
        # bash replaces only what follows the last ":" of the word
        if [[ $cur == *:* ]]; then
            local keep=${cur%"${cur##*:}"}
            COMPREPLY=("${COMPREPLY[@]#"$keep"}")
        fi
        return 0
        ;;
    --profile)
        mapfile -t COMPREPLY < <(compgen -W "$(_delayq_profiles "$prog")" -- "$cur")
        return 0
        ;;
    --file | --textfile | --auth-file | --http-tls-cert | --http-tls-key)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0
        ;;
    -*)
        # an option that takes a value: an enum's words, else a value only the user knows
        local spec arg words
        spec=$(_delayq_spec "$prog" "$cmd" "$prev")
        read -r _ _ _ arg words <<<"$spec"
        if [[ -n $spec && $arg != - ]]; then
            [[ -n $words ]] && mapfile -t COMPREPLY < <(compgen -W "${words//,/ }" -- "$cur")
            return 0
        fi
        ;;
    esac

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--help --version --profile" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_delayq_commands "$prog")" -- "$cur")
        fi
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_delayq_options "$prog" "$cmd")" -- "$cur")
        return 0
    fi
    case $cmd in
    ls)
        mapfile -t COMPREPLY < <(compgen -W "due future inflight failed done parked" -- "$cur")
        ;;
    export)
        mapfile -t COMPREPLY < <(compgen -W "due future inflight failed parked" -- "$cur")
        ;;
    config)
        # FIELD=VALUE: the fields config --help lists (several a line; each has a _)
        local fields
        fields=$("$prog" config --help 2>/dev/null | awk '/^  [a-z_]+ / { for (i = 1; i <= NF; i++) if ($i ~ /^[a-z]+_[a-z_]+$/) print $i "=" }')
        compopt -o nospace 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -W "$fields" -- "$cur")
        ;;
    esac
    return 0
}
complete -F _delayq delayq
