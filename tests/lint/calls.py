#!/usr/bin/env python3
"""calls.py BUILD_DIR: no hidden call cycles. Includes can be acyclic while the calls are
not (two files that include only a shared header and call each other): this reads the
built objects of the library, the inspector and the delayq command with nm, draws an edge
A -> B when A uses a symbol B defines, and fails on any cycle of objects, naming the
symbols on each edge of it. Dependencies point one way, object by object too."""
import collections
import pathlib
import subprocess
import sys

build = pathlib.Path(sys.argv[1])
objs = []
for d in ("libdq_core.a.p", "libdq_tui.a.p", "delayq.p"):
    objs += sorted((build / "src" / d).glob("*.o"))
if not objs:
    print(f"lint.calls: no objects under {build}/src", file=sys.stderr)
    sys.exit(1)


def syms(o, flag):
    out = subprocess.run(["nm", flag, str(o)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


name = {o: o.name.replace(".c.o", "").replace("_", "/", 1) for o in objs}
defined = {}
for o in objs:
    for s in syms(o, "--defined-only"):
        defined.setdefault(s, o)
edges = collections.defaultdict(dict)
for o in objs:
    for s in syms(o, "-u"):
        t = defined.get(s)
        if t is not None and t != o:
            edges[o].setdefault(t, []).append(s)

# Tarjan's strongly connected components
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        sccs.append(comp)


sys.setrecursionlimit(10000)
for o in objs:
    if o not in index:
        visit(o)
bad = [c for c in sccs if len(c) > 1]
for c in bad:
    members = set(c)
    print("lint.calls: a cycle of objects: " + " <-> ".join(sorted(name[o] for o in c)), file=sys.stderr)
    for a in sorted(c, key=lambda o: name[o]):
        for b, ss in sorted(edges[a].items(), key=lambda kv: name[kv[0]]):
            if b in members:
                print(f"  {name[a]} -> {name[b]}: {', '.join(sorted(ss)[:6])}", file=sys.stderr)
nedges = sum(len(v) for v in edges.values())
print(f"# {len(objs)} objects, {nedges} edges, {len(bad)} cycles")
sys.exit(1 if bad else 0)
