#!/usr/bin/env python3
"""docs.py ROOT: cross-references that rot silently. Every "PROTOCOL.md 5.14" (or
"PROTOCOL 10.8", "PROTOCOL.md section 6", "§5.2") named in src/, lua/, bench/ and
tests/ must be a heading of docs/PROTOCOL.md, and every fuzz target of
tests/fuzz/meson.build must have exactly one row in tests/fuzz/README.md."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
bad = []

heads = set()
for line in (root / "docs/PROTOCOL.md").read_text(encoding="utf-8").splitlines():
    m = re.match(r"^#{2,4} (\d+(?:\.\d+)?[a-z]?)[. ]", line)
    if m:
        heads.add(m.group(1))

ref = re.compile(r"PROTOCOL(?:\.md)?,? (?:section |sections |§)?(\d+(?:\.\d+)?[a-z]?)\b"
                 r"|sections? (\d+(?:\.\d+)?[a-z]?)(?:-(\d+(?:\.\d+)?[a-z]?))? of (?:docs/)?PROTOCOL")
for top in ("src", "lua", "bench", "tests"):
    for p in sorted((root / top).rglob("*")):
        if not p.is_file() or p.suffix not in (".c", ".h", ".lua", ".py", ".sh", ".build", ".md"):
            continue
        if p.name == "docs.py":
            continue
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for m in ref.finditer(line):
                for sec in filter(None, m.groups()):
                    if sec not in heads:
                        bad.append(f"{p.relative_to(root)}:{n}: PROTOCOL.md has no section {sec}")

build = (root / "tests/fuzz/meson.build").read_text(encoding="utf-8")
block = build[build.index("fuzz_targets = [") : build.index("]\n", build.index("fuzz_targets = ["))]
targets = re.findall(r"\['(\w+)'", block)
readme = (root / "tests/fuzz/README.md").read_text(encoding="utf-8")
for t in targets:
    rows = re.findall(r"^\| `fuzz_" + t + r"` \|", readme, re.M)
    if len(rows) != 1:
        bad.append(f"tests/fuzz/README.md: {len(rows)} rows for fuzz_{t} (one expected)")
for t in re.findall(r"^\| `fuzz_(\w+)` \|", readme, re.M):
    if t not in targets:
        bad.append(f"tests/fuzz/README.md: fuzz_{t} is not a target of tests/fuzz/meson.build")

for b in bad:
    print("lint.docs: " + b, file=sys.stderr)
print(f"# {len(heads)} PROTOCOL headings, {len(targets)} fuzz targets, {len(bad)} problems")
sys.exit(1 if bad else 0)
