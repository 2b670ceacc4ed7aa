#!/usr/bin/env python3
# A persistent handler for `delayq work --persistent -- ./handler.py`: one task per stdin line.
import json, sys, traceback
def handle(task):                                   # your code: return done or retry, raise to fail
    p = task["payload"]
    if isinstance(p, dict) and "error" in p:
        raise RuntimeError(p["error"])             # fails for good; the traceback is its trace
    return "retry" if isinstance(p, dict) and p.get("busy") else "done"
for line in sys.stdin:
    task = json.loads(line)
    try:
        out = {"id": task["id"], "result": handle(task)}
    except Exception as e:
        out = {"id": task["id"], "result": "fail", "error": repr(e), "trace": traceback.format_exc()}
    print(json.dumps(out), flush=True)
