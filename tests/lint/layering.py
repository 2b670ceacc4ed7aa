#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""layering.py: the include rules of STYLE.md §0.1 that grep cannot check.

Usage: layering.py SOURCE_ROOT   (HIREDIS_ALLOW: space-separated src/ paths, from
layering.sh, which owns the allowlist)

Quoted includes are resolved as the compiler resolves them (the including file's
directory, then src/ and src/lib/, the include_directories of src/meson.build), so a
rule is checked against the file actually included, not the spelling. Rules:

  back-edge  an include runs back up the ranks cli > tui > fmt > lib
  cycle      modules (x.c and x.h in one directory) include each other, transitively
  hiredis    redisReply or a hiredis include outside the files that talk to hiredis
  unresolved a quoted include the compiler could not find either

Prints one "path:line: layering/RULE: ..." line per violation; exits 1 if any.
"""
import os
import re
import sys

RANKS = {"lib": 0, "fmt": 1, "tui": 2, "cli": 3}
RANK_NAMES = {v: k for k, v in RANKS.items()}
INCLUDE_DIRS = ["src", "src/lib"]  # after the including file's own directory
# Generated from lua/ by lua/embed.py into the build tree; it belongs to the library.
GENERATED = {"dq_scripts.h": "lua/dq_scripts.h (generated)"}
PUBLIC = "src/delayq.h"  # anyone may include it; its own includes rank as lib

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
REPLY_RE = re.compile(r"\bredisReply\b")


def strip_comments(text):
    """Blanks out comments and string/char literals, keeping newlines (and so line
    numbers); the quoted name of an #include survives because it is re-read from the
    original line."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if j < n and text[j] == c:
                j += 1  # else unterminated: it ends before the newline
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def rank_of(rel):
    """Rank of a src/ path, or None for files outside the ranked tree."""
    if rel == PUBLIC or rel in GENERATED.values():
        return RANKS["lib"]
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] == "src" and parts[1] in RANKS:
        return RANKS[parts[1]]
    return None


def module_of(rel):
    return os.path.splitext(rel)[0]


def resolve(root, rel_from, name):
    """Where the compiler finds #include "name" written in rel_from (a root-relative
    path), as a root-relative path; None when it finds nothing."""
    for d in [os.path.dirname(rel_from)] + INCLUDE_DIRS:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    if name in GENERATED:
        return GENERATED[name]
    return None


def sources(root):
    found = []
    for d, dirs, files in os.walk(os.path.join(root, "src")):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                found.append(os.path.relpath(os.path.join(d, f), root))
    return found


def find_cycle(graph, scc):
    """One cycle through the strongly connected set scc, as a list of modules that starts
    and ends with the same one (shortest from the set's first module, by BFS)."""
    start = min(scc)
    prev = {start: None}
    queue = [start]
    while queue:
        m = queue.pop(0)
        for nxt in sorted(graph.get(m, {})):
            if nxt not in scc:
                continue
            if nxt == start:
                chain = [m]
                while prev[chain[-1]] is not None:
                    chain.append(prev[chain[-1]])
                return chain[::-1] + [start]
            if nxt not in prev:
                prev[nxt] = m
                queue.append(nxt)
    return [start, start]  # not reached: scc is strongly connected


def sccs(graph):
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def main():
    if len(sys.argv) != 2 or "HIREDIS_ALLOW" not in os.environ:
        sys.stderr.write("usage: HIREDIS_ALLOW='src/...' layering.py SOURCE_ROOT\n")
        return 2
    root = sys.argv[1]
    allow = set(os.environ["HIREDIS_ALLOW"].split())
    problems = []
    # module -> {included module: first (file, line, spelling) that includes it}
    graph = {}

    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.split("\n")
        code = strip_comments(text).split("\n")
        mod = module_of(rel)
        graph.setdefault(mod, {})
        my_rank = rank_of(rel)
        for no, (line, stripped) in enumerate(zip(lines, code), 1):
            m = INCLUDE_RE.match(line)
            if m and stripped.lstrip().startswith("#"):
                kind, name = m.groups()
                if name.startswith("hiredis") and rel not in allow:
                    spelled = f"<{name}>" if kind == "<" else f'"{name}"'
                    problems.append(f"{rel}:{no}: layering/hiredis: #include {spelled} outside"
                                    f" the files that talk to hiredis (HIREDIS_ALLOW)")
                if kind == '"':
                    target = resolve(root, rel, name)
                    if target is None:
                        problems.append(f'{rel}:{no}: layering/unresolved: #include "{name}"'
                                        f" is not in {os.path.dirname(rel)}/ nor in"
                                        f" {'/, '.join(INCLUDE_DIRS)}/")
                        continue
                    to_rank = rank_of(target)
                    if my_rank is not None and to_rank is not None and to_rank > my_rank:
                        problems.append(f'{rel}:{no}: layering/back-edge: #include "{name}"'
                                        f" ({target}): {RANK_NAMES[my_rank]} must not include"
                                        f" {RANK_NAMES[to_rank]} (cli > tui > fmt > lib)")
                    tmod = module_of(target)
                    if tmod != mod:
                        graph[mod].setdefault(tmod, (rel, no, name))
                continue
            if REPLY_RE.search(stripped) and rel not in allow:
                problems.append(f"{rel}:{no}: layering/hiredis: redisReply outside the files"
                                f" that talk to hiredis (HIREDIS_ALLOW)")

    for comp in sccs(graph):
        if len(comp) < 2:
            continue
        cyc = find_cycle(graph, comp)
        rel, no, _ = graph[cyc[0]][cyc[1]]
        steps = "; ".join(f'{graph[a][b][0]}:{graph[a][b][1]} includes "{graph[a][b][2]}"'
                          for a, b in zip(cyc, cyc[1:]))
        problems.append(f"{rel}:{no}: layering/cycle: {' -> '.join(cyc)} ({steps})")

    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
