#!/bin/sh
# protocol.sh: runs the Python walkthrough of docs/PROTOCOL.md section 7, taken out of
# the document itself (its ```python blocks, in order), against a private redis-server,
# on both script paths of section 6: FCALL with the function library of this build, and
# EVALSHA with the script texts the walkthrough builds from lua/. Producer, claim, ack,
# retry, fail, extend, release, pause, the wake channel (a due time after an enqueue,
# lease:<ms> after a claim, resume), and the walkthrough's own consumer loop.
# Needs a python3 with redis-py (Debian's python3-redis, .ci/deps).
. "$(dirname "$0")/lib.sh"

py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import redis' 2>/dev/null; then
    py=$p
    break
  fi
done
if [ -z "$py" ]; then
  echo "# no python3 with the redis module (python3-redis, see .ci/deps)" >&2
  [ "${DQ_TEST_ALLOW_SKIP:-}" = 1 ] && exit 77
  exit 1
fi
need redis-cli
redis_start

# the driver: one run per path, each on a flushed server (so the first call of each
# path meets "Function not found" / NOSCRIPT and loads the code the walkthrough's way)
cat >"$work/driver.py" <<'EOF'
import functools, os, pathlib, re, sys, time

src = pathlib.Path(os.environ["DQ_SOURCE_ROOT"])
doc = (src / "docs" / "PROTOCOL.md").read_text()
library = (pathlib.Path(os.environ["DQ_BUILD_ROOT"]) / "lua" / "delayq_library.lua").read_bytes()
port = int(sys.argv[1])
failed = 0


def check(name, ok, detail=""):
    global failed
    print(("ok - " if ok else "not ok - ") + name + ("" if ok else ": " + str(detail)))
    if not ok:
        failed += 1


# Section 7, up to section 8: its python blocks are the walkthrough.
sec = doc[doc.index("\n## 7. "):doc.index("\n## 8. ")]
blocks = re.findall(r"^```python\n(.*?)^```$", sec, re.S | re.M)
check("section 7 has its three python blocks", len(blocks) == 3, len(blocks))
library_block, producer_block, consumer_block = blocks
# The one change made to the document's code: the server is ours, not 6379.
check("the producer connects to port=6379", producer_block.count("port=6379") == 1)
producer_block = producer_block.replace("port=6379", "port=%d" % port)

READERS = {"stats", "page", "find", "search", "audit", "workers", "config_get", "errors",
           "schedule_get", "overview", "keys", "history"}


def one_path(path):
    print("# path:", path)
    ns = {"__name__": "walkthrough"}
    exec(compile(library_block, "PROTOCOL.md section 7 (client)", "exec"), ns)
    redis = ns["redis"]
    admin = redis.Redis(host="127.0.0.1", port=port)
    admin.flushall()
    admin.script_flush()
    admin.function_flush()
    admin.config_resetstat()
    if path == "fcall":
        ns["DelayQ"] = functools.partial(ns["DelayQ"], library=library)
    os.chdir(src)                                  # lua_dir="lua": the checkout's scripts
    exec(compile(producer_block, "PROTOCOL.md section 7 (producer)", "exec"), ns)
    exec(compile(consumer_block, "PROTOCOL.md section 7 (consumer)", "exec"), ns)
    q, a, b, c = ns["q"], ns["a"], ns["b"], ns["c"]
    DelayQ, Wake = ns["DelayQ"], ns["Wake"]

    readers = {n for n, (_, _, ro) in q.src.items() if ro}
    check(path + ": the twelve readers of section 6 are the no-writes scripts",
          readers == READERS, readers)
    # the producer block's comments
    now = q.call("stats")[0]
    check(path + ": a added", a[0] == b"welcome-42" and a[1] == 0 and
          29_000 <= a[2] - now <= 30_000, (a, now))
    check(path + ": b a duplicate", b == (b"welcome-42", 1, a[2]), b)
    check(path + ": c generated id 2", c[0] == b"2" and c[1] == 0 and c[2] <= now + 1, c)

    # the template example of 5.2, and the refused longer id forms
    tmpl = bytes.fromhex("9901cf0000000000000000a3616263" "00cf0000000000000000"
                         "c0c0c4026869c0")
    check(path + ": envelope_template matches 5.2's example",
          ns["envelope_template"](b"hi", b"abc") == tmpl)
    for form, bad in (("str8", b"\xd9\x03abc"), ("bin8", b"\xc4\x03abc")):
        try:
            q.call("enqueue", 1, tmpl.replace(b"\xa3abc", bad), "d0", "abc")
            check(path + ": id as " + form + " refused", False, "accepted")
        except redis.exceptions.ResponseError as e:
            check(path + ": id as " + form + " refused",
                  str(e).startswith("DQ_EINVAL envelope: id field does not hold the id"), e)

    wake = Wake(q.r, q.keys[10])
    # claim the due one (c): a lease into an empty in-flight set is announced
    now, next_due, moved, tasks, paused = q.claim(10, 30_000, "t1")
    check(path + ": claim returns c", [t["id"] for t in tasks] == [b"2"] and
          tasks[0]["payload"] == b"any bytes" and tasks[0]["task_key"] == b"2" and
          next_due == a[2] and moved == 0 and paused is None, (tasks, next_due))
    msg = wake.get(5)
    check(path + ": claim announced lease:<ms>", msg == b"lease:%d" % (now + 30_000), msg)
    t = tasks[0]
    ext = q.extend([t], 60_000)
    check(path + ": extend", len(ext) == 1 and ext[0] >= now + 60_000, ext)
    check(path + ": ack", q.ack(t) == 1)
    try:
        q.ack(t)
        check(path + ": a second ack is refused", False, "accepted")
    except redis.exceptions.ResponseError as e:
        check(path + ": a second ack is refused", str(e).startswith("DQ_ELEASE"), e)

    # an enqueue due before everything scheduled wakes a subscriber with its due time
    x = q.enqueue(b"x")
    msg = wake.get(5)
    check(path + ": enqueue published its due time", msg == b"%d" % x[2], (msg, x))
    now, _, _, tasks, _ = q.claim(1, 30_000, "t1")
    check(path + ": claim x", [t["payload"] for t in tasks] == [b"x"], tasks)
    check(path + ": lease announced again", wake.get(5) == b"lease:%d" % (now + 30_000))
    check(path + ": release", q.release(tasks[0]) == 1)
    msg = wake.get(5)
    check(path + ": release published its due time", msg is not None and msg.isdigit(), msg)
    now, _, _, tasks, _ = q.claim(1, 30_000, "t1")
    check(path + ": released task claimed again at the same attempt",
          [(t["payload"], t["attempt"]) for t in tasks] == [(b"x", 0)], tasks)
    check(path + ": lease announced", wake.get(5) is not None)
    check(path + ": ack x", q.ack(tasks[0]) == 1)

    # pause: claim answers paused; resume is announced
    q.call("pause", "pause", "alice", 0, "walkthrough")
    msg = wake.get(5)
    check(path + ": pause announced (for partitioned queues' workers)", msg == b"pause", msg)
    q.enqueue(b"z")
    wake.get(5)                                    # z's due time
    now, _, _, tasks, paused = q.claim(10, 30_000, "t1")
    check(path + ": paused claim", tasks == [] and paused == 0, (tasks, paused))
    q.call("pause", "resume", "alice")
    msg = wake.get(5)
    check(path + ": resume announced", msg == b"resume", msg)

    # the walkthrough's consumer loop: ack, retry, fail, an id that is not UTF-8
    raw_id = b"\xff\xfe-raw"
    check(path + ": non-UTF-8 id added", q.enqueue(b"ok", id=raw_id)[1] == 0)
    q.enqueue(b"flaky", id=b"flaky-1", max_attempts=2)
    q.enqueue(b"bad", id=b"bad-1")
    seen = {"registered": 0, "again": 0}
    end = time.monotonic() + 20
    workers_key, beats_key = q.keys[0][:-5] + "workers", q.keys[0][:-5] + "beats"

    def stop():
        st = q.call("stats")                       # done, retried, failed: elements 12..14
        n = q.call("workers", 10, 0, 0)[1]
        if n == 1 and not seen["registered"]:      # as a prune would: it must register again
            admin.hdel(workers_key, "worker-1")
            admin.zrem(beats_key, "worker-1")
        elif n == 1:
            seen["again"] = 1
        seen["registered"] = max(seen["registered"], n)
        return (st[11:14] == [4, 1, 2] and seen["again"]) or time.monotonic() > end
    ns["work"](q, ns["handle"], "worker-1", beat_ms=100, stop=stop)
    st = q.call("stats")
    check(path + ": the loop acked z and ok, retried flaky once, failed flaky and bad",
          st[11:14] == [4, 1, 2], st[11:14])
    check(path + ": the loop registered the worker, and again after a prune",
          seen == {"registered": 1, "again": 1}, seen)
    check(path + ": and said gone", q.call("workers", 10, 0, 0)[1] == 0)
    for id_, want in ((b"bad-1", b"failed"), (b"flaky-1", b"failed"), (raw_id, b"none")):
        got = q.call("find", id_, "", 0)[0]
        check(path + ": find %r is %s" % (id_, want.decode()), got == want, got)
    page = q.call("page", "failed", 0, 50)
    check(path + ": two failures listed", page[1] == 2, page[:2])
    wake.close()

    # the path really taken, from the server's own counters
    cs = admin.info("commandstats")
    calls = {k: v["calls"] for k, v in cs.items()}
    if path == "fcall":
        check(path + ": FCALL and FCALL_RO only",
              calls.get("cmdstat_fcall", 0) > 0 and calls.get("cmdstat_fcall_ro", 0) > 0 and
              "cmdstat_evalsha" not in calls and "cmdstat_evalsha_ro" not in calls, calls)
        libs = admin.function_list(library="delayq_v1_*")
        names = [l[l.index(b"library_name") + 1] for l in libs]
        check(path + ": the library name on its first line is the one loaded",
              names == [q.lib_name.encode()], (names, q.lib_name))
    else:
        check(path + ": EVALSHA and EVALSHA_RO only",
              calls.get("cmdstat_evalsha", 0) > 0 and calls.get("cmdstat_evalsha_ro", 0) > 0 and
              "cmdstat_fcall" not in calls and "cmdstat_fcall_ro" not in calls, calls)
    q.r.close()
    admin.close()


for p in ("fcall", "evalsha"):
    try:
        one_path(p)
    except Exception as e:
        import traceback
        traceback.print_exc()
        check(p + ": the walkthrough ran", False, repr(e))
print("# %d failed" % failed)
sys.exit(1 if failed else 0)
EOF

if "$py" "$work/driver.py" "$redis_port"; then
  ok "PROTOCOL.md section 7 walkthrough, FCALL and EVALSHA"
else
  bad "PROTOCOL.md section 7 walkthrough, FCALL and EVALSHA"
fi
finish
