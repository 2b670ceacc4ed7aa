#!/usr/bin/env python3
"""cli_specs.py DELAYQ ROOT: the man pages and the shell completions agree with the option
tables the program parses with (`delayq help --specs`, src/cli/opts.h).

- every command has its page, and the page's OPTIONS section lists exactly the command's
  own options (long names and short letters); delayq(1)'s GLOBAL OPTIONS lists exactly
  the global ones;
- every option the completion files name exists, and bash, driven as it completes,
  offers exactly the command's and the global options after "--", and no option list
  after an option that takes a value."""
import pathlib
import re
import subprocess
import sys

delayq, root = sys.argv[1], pathlib.Path(sys.argv[2])
MAN_DIR = root / "docs" / "man"  # the man pages' sources (delayq-CMD.1.scd)
COMPLETIONS = [root / "completions/delayq.bash", root / "completions/_delayq"]
MAIN_ONLY = {"--help", "--version", "--profile", "-h", "--specs"}  # delayq's own
bad = []

# "CMD --long -x ARG [WORDS]" per option; a bare "CMD" line for each command
specs = subprocess.run([delayq, "help", "--specs"], capture_output=True, text=True,
                       check=True).stdout.splitlines()
opts, takes_value = {}, {}
for line in specs:
    f = line.split()
    opts.setdefault(f[0], set())
    if len(f) >= 4:
        opts[f[0]].add(f[1])
        if f[2] != "-":
            opts[f[0]].add(f[2])
        takes_value[(f[0], f[1])] = f[3] != "-"
glob = opts.pop("global")
commands = sorted(opts)
if len(commands) < 10 or "--url" not in glob:
    bad.append(f"help --specs looks wrong: {len(commands)} commands")


def section_options(page, heading):
    """The -x / --long tokens of the item lines (starting with *-) of one section."""
    found, inside = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            inside = line[2:].strip() == heading
            continue
        if inside and line.startswith("*-"):
            for tok in re.findall(r"\*(--?[A-Za-z][A-Za-z0-9-]*)\*", line):
                found.add(tok)
    return found


def compare(what, listed, want):
    for o in sorted(want - listed):
        bad.append(f"{what} lacks {o}")
    for o in sorted(listed - want):
        bad.append(f"{what} lists {o}, which the program does not have")


for c in commands:
    page = MAN_DIR / f"delayq-{c}.1.scd"
    if not page.is_file():
        bad.append(f"no man page {page.relative_to(root)} for delayq {c}")
        continue
    compare(f"{page.relative_to(root)} OPTIONS", section_options(page, "OPTIONS"), opts[c])
main_page = MAN_DIR / "delayq.1.scd"
compare(f"{main_page.relative_to(root)} GLOBAL OPTIONS",
        section_options(main_page, "GLOBAL OPTIONS"), glob)

# the completion files name no option that does not exist
known = glob | MAIN_ONLY | set().union(*opts.values())
for comp in COMPLETIONS:
    # the code, not its comments (which quote formats such as "--long -x")
    text = "\n".join(re.sub(r"^\s*#.*", "", l) for l in comp.read_text(encoding="utf-8").splitlines())
    for tok in sorted(set(re.findall(r"(?<![A-Za-z0-9_$-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![A-Za-z0-9_-])", text))):
        # shell and tool flags of the scripts themselves
        if tok in {"-W", "-f", "-c", "-F", "-o", "-S", "-a", "-t", "-p", "-n", "-v", "-r",
                   "-s", "-z", "-oE", "-u", "-d", "-e", "-l"}:
            continue
        if tok not in known:
            bad.append(f"{comp.relative_to(root)} names {tok}, which the program does not have")

# bash, driven as it completes (COMP_LINE, COMP_WORDS, the function complete -p names)
driver = r'''
. "$1"
shift
for line in "$@"; do
  COMP_LINE=$line; COMP_POINT=${#line}
  read -ra COMP_WORDS <<<"$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
  _delayq delayq "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]:-}"
  printf '%s\t' "$line" "${COMPREPLY[@]}"; printf '\n'
done
'''
lines = []
for c in commands:
    lines.append(f"delayq {c} --")
    for (cc, o), v in takes_value.items():
        if cc in (c, "global") and v and o != "--profile":
            lines.append(f"delayq {c} {o} ")
# "delayq" on PATH is the build's, as it is once installed
env = {"PATH": str(pathlib.Path(delayq).resolve().parent) + ":/usr/bin:/bin"}
out = subprocess.run(["bash", "--norc", "--noprofile", "-c", driver, "driver",
                      str(COMPLETIONS[0])] + lines,
                     capture_output=True, text=True, env=env, timeout=120).stdout
for row in out.splitlines():
    f = row.split("\t")
    line, got = f[0], {x for x in f[1:] if x}
    c = line.split()[1]
    if line.endswith("--"):
        want = {o for o in (opts[c] | glob) - {"--profile"} if o.startswith("--")}
        compare(f"bash completion of '{line}'", got, want)
    elif any(x.startswith("-") for x in got):
        bad.append(f"bash completion of '{line}' offers options where a value goes: {sorted(got)[:4]}")

if bad:
    print("cli_specs: the man pages or completions and the program's option tables differ:")
    for b in bad:
        print("  " + b)
    sys.exit(1)
print(f"cli_specs ok: {len(commands)} commands, their pages and completions match the tables")
