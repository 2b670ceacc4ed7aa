#!/usr/bin/env python3
"""summary.py: one plain "N passed, N failed" line over meson test logs.

Counts cmocka test cases from each test's output ("[  PASSED  ] N test(s)." and
"[  FAILED  ] N test(s)"); a test that prints no cmocka summary counts as one case,
passed or failed by its meson result. A cmocka binary that crashed before its summary
counts as one failure.
"""
import json
import re
import sys

passed = failed = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            out = (t.get('stdout', '') or '') + (t.get('stderr', '') or '')
            ok = t.get('result') in ('OK', 'EXPECTEDFAIL', 'SKIP')
            p = re.findall(r'\[  PASSED  \] (\d+) test', out)
            fl = re.findall(r'\[  FAILED  \] (\d+) test', out)
            # shell suites (tests/tui) end with their own "N passed, N failed" line
            for a, b in re.findall(r'^(\d+) passed, (\d+) failed$', out, re.M):
                p.append(a)
                fl.append(b)
            if p or fl:
                passed += sum(int(x) for x in p)
                failed += sum(int(x) for x in fl)
                if not ok and not fl:
                    failed += 1
            elif ok:
                passed += 1
            else:
                failed += 1
print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
