#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gates.py: every script's role gate (lua/lib.lua role_gate, PROTOCOL 5.16a) lists
exactly the commands the script can reach, with their keys, and the role it names may
run them all under its ACL line in docs/SECURITY.md.

Usage: gates.py SOURCE_ROOT [--print]

Static and conservative: a script reaches every redis.call in its own text
and in every lib.lua helper it calls, directly or through other helpers, on any path.
A key is named by the K_ local it is (K_SCHED: sched), hist_key(...) is hist, K_GROUP ..
is group; a key held in a variable is resolved by VARS below (a new one fails here until
it is added). The gate is the script's first "<role>_gate('<name>', '<needs>')" call.
--print writes each script's needs in gate form (to paste after a change).
"""
import fnmatch
import os
import re
import sys

# (file, expression) -> the keys a variable can hold where it is passed to redis.call
VARS = {
    ('lib.lua', 'h'): ['failed', 'running'],  # resolve(h, id)
    ('lib.lua', 'k'): ['hist'],  # hist_add
    ('lib.lua', 'K_KQ .. k'): ['kq'],  # per-key limits: one key's parked tasks
    ('lib.lua', 'rk'): ['roll'],  # history: one minute's rollup (roll.flush, open)
    ('history.lua', 'rk'): ['roll'],
    ('keys.lua', 'K_KQ .. r.key'): ['kq'],
    ('drop.lua', 'K_KQ .. k'): ['kq'],  # drop --key KEY --parked
    ('drop.lua', 'K_KQ .. pe.k'): ['kq'],  # drop ID of a parked task
    ('drop.lua', 'K_KQ .. p[4]'): ['kq'],
    ('find.lua', 'z'): ['kq'],  # a key's parked tasks
    ('page.lua', 'K_KQ .. ks[i]'): ['kq'],  # the parked view
    ('drop.lua', 'z'): ['sched', 'failidx', 'group'],  # filter_set / the scheduled set
    ('requeue.lua', 'z'): ['failidx', 'group'],  # filter_set
    ('page.lua', 'z'): ['sched', 'inflight', 'failidx', 'group', 'doneidx'],
    ('page.lua', 'h'): ['running', 'failed', 'done'],
    ('search.lua', 'z'): ['sched', 'inflight', 'failidx', 'group'],
    ('search.lua', 'h'): ['running', 'failed'],
}
# Helpers that check their own commands when they run (redis.acl_check_cmd, before any of
# them) instead of every call's gate checking them for them: the rollups' minute opening,
# which runs once a minute and skips itself for a user refused them (lib.lua open).
# A script's gate need not list what only these run; each must check every command it
# and the helpers it calls can run.
LAZY = {'open'}
ROLES = {'operator': 'delayq-operator', 'worker': 'delayq-worker',
         'producer': 'delayq-producer', 'viewer': 'delayq-viewer'}
# commands whose first argument is a channel, and those that write their key (the rest
# read it, or take no key)
CHANNEL = {'PUBLISH', 'SPUBLISH'}
WRITES = {'ZADD', 'ZREM', 'ZPOPMIN', 'HSET', 'HDEL', 'HINCRBY', 'INCRBY', 'RPUSH', 'LTRIM',
          'DEL', 'XADD', 'SET', 'SADD', 'SREM'}
NOKEY = {'TIME'}

FUNC = re.compile(r'^(?:local )?function ([\w.]+)\(', re.M)  # (limits.allow: a table's)
# redis.call only: a refused redis.pcall returns an error the script handles (wake()
# falls back from SPUBLISH to PUBLISH), so it cannot leave a script half-applied
CALL = re.compile(r"redis\.call\(\s*'(\w+)'")
# The needs are one long-bracket literal: Lua 5.1 does not fold '...' .. '...', so a
# concatenation would be built on every call of the script (PROTOCOL 5.16a, its costs).
GATE = re.compile(r"\b(operator|worker|producer|viewer)_gate\(\s*'(\w+)',\s*\[\[([^\]]*)\]\]\s*\)")
GATE_ANY = re.compile(r"\b(operator|worker|producer|viewer)_gate\(")


def code(text):
    """@text without its comments (whole lines and trailing ' -- ...')."""
    out = []
    for l in text.split('\n'):
        if l.lstrip().startswith('--'):
            continue
        out.append(re.sub(r' +--( .*)?$', '', l))
    return '\n'.join(out)


def functions(text):
    """{name: body} of the top-level 'local function' blocks (they end at '^end')."""
    out = {}
    for m in FUNC.finditer(text):
        end = re.compile(r'^end\b', re.M).search(text, m.end())
        out[m.group(1)] = text[m.start():end.end() if end else len(text)]
    return out


def first_arg(text, at):
    """The text of the argument after the command name, up to its ',' or ')'."""
    i = text.index(',', at) + 1 if text[at:].lstrip().startswith(',') else None
    if i is None:
        return None
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            if depth == 0:
                break
            depth -= 1
        elif c == ',' and depth == 0:
            break
        j += 1
    return text[i:j].strip()


def key_names(fname, expr, where):
    if expr is None:
        return [None]
    m = re.fullmatch(r'K_(\w+)', expr)
    if m and m.group(1) not in ('GROUP', 'PREFIX'):
        return [m.group(1).lower()]
    if expr.startswith('K_GROUP ..') or expr.startswith('K_GROUP..'):
        return ['group']
    if expr.startswith('hist_key('):
        return ['hist']
    if (fname, expr) in VARS:
        return VARS[(fname, expr)]
    sys.exit('gates.py: %s: cannot tell which key %r is in %s; add it to VARS' %
             (fname, expr, where))


def commands(fname, text, where):
    out = set()
    for m in CALL.finditer(text):
        cmd = m.group(1)
        expr = None if cmd in NOKEY else first_arg(text, m.end())
        for k in key_names(fname, expr, where):
            out.add((cmd, k))
    return out


def acl_lines(root):
    roles = {}
    for line in open(os.path.join(root, 'docs', 'SECURITY.md')):
        if line.startswith('ACL SETUSER '):
            words = line.split()
            roles[words[2]] = words[3:]
    return roles


def example(key):
    if key == 'group':
        return 'dq:{q}:group:1'
    if key == 'hist':
        return 'dq:{q}:hist:1'
    if key == 'roll':
        return 'dq:{q}:roll:1'
    return 'dq:{q}:' + key


def granted(rules, cmd, key):
    """Whether an ACL line (its words) lets cmd run on key (Redis 7 selectors)."""
    c = cmd.lower()
    if ('+' + c) not in rules and '+@all' not in rules:
        return False
    if key is None:
        return True
    name = example(key)
    if cmd in CHANNEL:
        return any(w.startswith('&') and fnmatch.fnmatchcase(name, w[1:]) for w in rules)
    for w in rules:
        m = re.fullmatch(r'(%(R|W|RW))?~(.*)', w)
        if not m or not fnmatch.fnmatchcase(name, m.group(3)):
            continue
        perm = m.group(2) or 'RW'
        if ('W' if cmd in WRITES else 'R') in perm:
            return True
    return False


def needs_text(needs):
    by = {}
    for cmd, k in sorted(needs, key=lambda x: (x[0], x[1] or '')):
        by.setdefault(cmd, [])
        if k:
            by[cmd].append(k)
    return ' '.join(' '.join([c] + ks) for c, ks in sorted(by.items()))


def parse_needs(text):
    out, cmd = set(), None
    words = text.split()
    for i, w in enumerate(words):
        if re.fullmatch(r'[A-Z]+', w):
            cmd = w
            if i + 1 == len(words) or re.fullmatch(r'[A-Z]+', words[i + 1]):
                out.add((cmd, None))
        else:
            out.add((cmd, w))
    return out


def main():
    root = sys.argv[1]
    show = '--print' in sys.argv
    lua = os.path.join(root, 'lua')
    lib_text = code(open(os.path.join(lua, 'lib.lua')).read())
    lib = functions(lib_text)
    lib_cmds = {n: commands('lib.lua', b, n) for n, b in lib.items()}
    calls = {n: {o for o in lib if o != n and re.search(r'\b%s\(' % o, b)} for n, b in lib.items()}
    acl = acl_lines(root)

    def reach(n, seen=None):
        """The commands helper @n can run, through the helpers it calls."""
        seen = set() if seen is None else seen
        if n in seen:
            return set()
        seen.add(n)
        if n in LAZY:
            return set()
        out = set(lib_cmds[n])
        for o in calls[n]:
            out |= reach(o, seen)
        return out
    bad = 0
    for n in sorted(LAZY):
        if n not in lib:
            print('lib.lua: no helper %s (gates.py LAZY)' % n)
            bad += 1
            continue
        own = set(lib_cmds[n])
        for o in calls[n]:
            if o not in LAZY:
                own |= reach(o, {n})
        checked = set(re.findall(r"check\('(\w+)'", lib[n]))
        for cmd in sorted({c for c, _ in own} - checked):
            print('lib.lua: %s runs %s without checking it first (gates.py LAZY)' % (n, cmd))
            bad += 1
    scripts = sorted(f for f in os.listdir(lua) if f.endswith('.lua') and f != 'lib.lua')
    for f in scripts:
        text = open(os.path.join(lua, f)).read()
        body = code(text)
        needs = commands(f, body, f)
        for n in lib:
            if re.search(r'\b%s\(' % n, body):
                needs |= reach(n)
        gate = GATE.search(body)
        if show:
            print('%s: %s' % (f, needs_text(needs)))
        if not gate:
            if GATE_ANY.search(body):
                print("%s: the role gate's needs are not one [[...]] literal "
                      "(<role>_gate('NAME', [[NEEDS]]))" % f)
            else:
                print('%s: no role gate (<role>_gate(NAME, NEEDS) before any command)' % f)
            bad += 1
            continue
        role, name = gate.group(1), gate.group(2)
        declared = parse_needs(gate.group(3))
        if name != f[:-4]:
            print('%s: the gate names the script %r' % (f, name))
            bad += 1
        # later gates, '<script>_<part>', check what only some calls run (before they
        # write), so the calls that do not run it do not pay for those checks
        for more in GATE.finditer(body, gate.end()):
            if more.group(1) != role or not more.group(2).startswith(name + '_'):
                print('%s: a later gate %r is not %s_gate(%r)' %
                      (f, more.group(2), role, name + '_<part>'))
                bad += 1
            declared |= parse_needs(more.group(3))
        before = body[:gate.start()]
        early = [m.group(1) for m in CALL.finditer(before)] + \
            [n for n in lib if re.search(r'\b%s\(' % n, before) and reach(n)]
        if early:
            print('%s: %s runs before the gate' % (f, ', '.join(early)))
            bad += 1
        missing, extra = needs - declared, declared - needs
        if missing:
            print('%s: the gate does not check %s' % (f, needs_text(missing)))
            bad += 1
        if extra:
            print('%s: the gate checks %s, which the script never runs' % (f, needs_text(extra)))
            bad += 1
        rules = acl.get(ROLES[role])
        if rules is None:
            print('%s: docs/SECURITY.md has no ACL line for %s' % (f, ROLES[role]))
            bad += 1
            continue
        refused = {n for n in needs if not granted(rules, *n)}
        if refused:
            print('%s: %s (%s_gate) may not run %s under docs/SECURITY.md' %
                  (f, ROLES[role], role, needs_text(refused)))
            bad += 1
    if bad:
        sys.exit(1)
    print('ok - %d scripts: each gate checks every command its script can run, and its role '
          'may' % len(scripts))


if __name__ == '__main__':
    main()
