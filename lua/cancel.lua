-- cancel: stops a task that is running (operator action). The task leaves flight at
-- once, in this call: to failed (reason 'cancelled', error 'cancelled by <who>') or, with
-- 'drop', deleted for good. The worker that holds it hears 'cancel:<task key>' on the
-- wake-up channel, stops the handler and finds its lease gone, so whatever the handler
-- returns is refused (the lease check, PROTOCOL.md 5.4): cancelling never races a
-- result. A worker that misses the message (its subscription was down) finds the lease
-- gone at its next renewal and stops the handler then. Recorded in the audit log.
-- A scheduled task is cancelled by dropping it (drop.lua); a failed one is not running.
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, failed, failidx,
--   stats, tally, groups, audit and the task's history key (hist:<task key>); publishes
--   on wake.
-- ARGV: [1] id, [2] mode 'fail' | 'drop', [3] who.
-- Reply: {worker that held it, the attempt it was on (counted from 1)}.
-- Errors: DQ_ENOTFOUND naming where the task is instead (scheduled, failed, or nowhere);
--   DQ_EINVAL for a bad mode.
-- Complexity: O(log N), plus O(k log N) when k old failures are trimmed (k <= 1000).
-- Flags: allow-oom (runs at maxmemory: moves one task to failed with a short error, or
--   deletes it; one audit entry; docs/OPERATIONS.md).
local gate = operator_gate('cancel', [[EXISTS group HDEL failed groups kin running stats
  HEXISTS failed groups running HGET failed groups ids running HINCRBY kin roll stats tally
  HLEN groups HMGET config tally HSET failed groups tally LTRIM hist PEXPIREAT roll PUBLISH
  wake RPUSH hist TIME XADD audit ZADD failidx group kpark sched ZCARD failidx kpark ZPOPMIN
  failidx kq ZRANGE sched ZREM group inflight kpark ZSCORE group]])
if gate then return gate end
allow_oom()
local id, mode, who = ARGV[1], ARGV[2], ARGV[3]
if mode ~= 'fail' and mode ~= 'drop' then
  return err('DQ_EINVAL', 'cancel: mode %q is not fail or drop', tostring(mode))
end
if not id or #id < 1 or #id > DQ_ID_MAX then
  return err('DQ_EINVAL', 'cancel: id must be 1..%d bytes', DQ_ID_MAX)
end
local tk = resolve(K_RUNNING, id)
if not tk then
  if resolve(K_FAILED, id) then
    return err('DQ_ENOTFOUND', 'task %q is not running: it is failed (drop or requeue it)', id)
  end
  if not string.match(id, '^%d+$') and redis.call('HGET', K_IDS, id) then
    return err('DQ_ENOTFOUND', 'task %q is not running: it is scheduled (drop it to cancel ' ..
      'it)', id)
  end
  return err('DQ_ENOTFOUND', 'task %q is not running', id)
end
local cfg = config()
local now = now_ms()
local raw = redis.call('HGET', K_RUNNING, tk)
local run = run_decode(raw)
local e = run and env_decode(run.m)
local msg = 'cancelled by ' .. who
local worker = run and run.worker or '?'
local attempt = e and e.attempt + 1 or 0
unrun(tk, e and e.k)
if mode == 'fail' then
  if e then
    hist_run(tk, run, e, 'fail', now, msg)
    roll.run(now - run.claimed) -- a failed run, ended by the cancel (history, PROTOCOL.md 13)
    e.attempt = math.min(e.attempt + 1, DQ_ATTEMPTS_MAX) -- the run counts, as a failure's
    to_failed(cfg, tk, env_encode(e), 'cancelled', msg, '', now, who, false)
  else
    -- a running record that does not decode: kept whole, as claim keeps such members
    to_failed(cfg, tk, raw, 'cancelled', msg, '', now, who, true)
  end
else
  hist_forget(tk)
  redis.call('HINCRBY', K_STATS, 'dropped', 1)
  roll.add('p', 1)
end
roll.flush(cfg.history_minutes, now)
audit(cfg, who, 'cancel', id .. (mode == 'drop' and ' drop' or ''),
  'ok: was running on ' .. worker .. ', attempt ' .. attempt)
wake('cancel:' .. tk)
return {worker, attempt}
