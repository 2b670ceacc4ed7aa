#!/usr/bin/env python3
"""docs.py ROOT: cross-references that rot silently. Every "PROTOCOL.md 5.14" (or
"PROTOCOL 10.8", "PROTOCOL.md section 6", "§5.2") named in src/, lua/, bench/ and
tests/ must be a heading of docs/PROTOCOL.md, every fuzz target of
tests/fuzz/meson.build must have exactly one row in tests/fuzz/README.md, and every
relative link of a Markdown file in the repository ([text](path#anchor)) names a file
that exists and, into a .md file, a heading of it (GitHub's anchors)."""
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



def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.replace("`", ""))
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, seen, fence = set(), {}, False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"^#{1,6} (.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
mds = 0
for p in sorted(root.rglob("*.md")):
    rel = p.relative_to(root)
    if rel.parts[0].startswith(("build", ".")):
        continue
    mds += 1
    # fenced blocks and code spans show link syntax, they are not links
    text = re.sub(r"```.*?```", "", p.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for m in link.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, frag = target.partition("#")
        dest = (p.parent / path).resolve() if path else p
        if not dest.exists():
            bad.append(f"{rel}: link to {target}: no such file")
        elif frag and dest.suffix == ".md" and frag not in anchors(dest):
            bad.append(f"{rel}: link to {target}: no heading with that anchor")

for b in bad:
    print("lint.docs: " + b, file=sys.stderr)
print(f"# {len(heads)} PROTOCOL headings, {len(targets)} fuzz targets, {mds} Markdown files, "
      f"{len(bad)} problems")
sys.exit(1 if bad else 0)
