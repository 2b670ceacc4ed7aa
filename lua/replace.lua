-- replace: fix and requeue (operator action). Replaces the payload of one failed task
-- and moves it back to scheduled, as requeue by id does (attempt reset to 0, deadline
-- cleared, history kept), in one call; refused when the failure is not the one the
-- caller read (it was requeued, dropped or trimmed, or it failed again since). Recorded
-- in the audit log with the sha1 of the old and the new payload.
-- KEYS: the eleven queue keys (see lib.lua); writes failed, failidx, sched, ids, stats,
--   audit.
-- ARGV: [1] id, [2] the task's envelope as read (the failure record's raw bytes),
--   [3] its failed ms as read, [4] the new payload (any bytes, up to max_payload),
--   [5] delay ms (0..max_delay_ms), [6] who.
-- Reply: {1}.
-- Errors: DQ_ENOTFOUND "changed since you opened it" when the task is no longer failed
--   or its failure is another one; DQ_EINVAL for bad arguments, a payload over
--   max_payload, or an undecodable failure. Nothing changes then (but the audit entry
--   of a refusal).
-- Complexity: O(log N).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = operator_gate('replace', [[EXISTS group HDEL failed groups HEXISTS failed
  running HGET failed HINCRBY roll stats HMGET config HSET ids PEXPIREAT roll PUBLISH wake
  TIME XADD audit ZADD sched ZRANGE sched ZREM failidx group ZSCORE group]])
if gate then return gate end
local cfg = config()
local now = now_ms()
local id, seen, seen_ms, payload, who = ARGV[1] or '', ARGV[2] or '', tonumber(ARGV[3]),
  ARGV[4] or '', ARGV[6] or ''
local delay = tonumber(ARGV[5])
if #ARGV ~= 6 or id == '' or not seen_ms then
  return err('DQ_EINVAL', 'replace: %d arguments; expected id, envelope, failed ms, payload, ' ..
    'delay, who', #ARGV)
end
if not delay or delay < 0 or delay > cfg.max_delay_ms or delay ~= math.floor(delay) then
  return err('DQ_EINVAL', 'delay: %q ms is not in 0..%s (max_delay_ms)', ARGV[5],
    dec(cfg.max_delay_ms))
end
if #payload > cfg.max_payload then
  return err('DQ_EINVAL', 'payload: %d bytes is over the limit of %s bytes (max_payload)',
    #payload, dec(cfg.max_payload))
end
local tk = resolve(K_FAILED, id)
local rec = tk and fail_decode(redis.call('HGET', K_FAILED, tk))
local e = rec and not rec.undecodable and env_decode(rec.raw)
local old = (e and e.payload) or ''
local detail = string.format('%s old=sha1:%s new=sha1:%s%s', id, redis.sha1hex(old),
  redis.sha1hex(payload), delay > 0 and (' delay=' .. dec(delay) .. 'ms') or '')
if not tk then
  audit(cfg, who, 'replace', detail, 'refused: not failed')
  return err('DQ_ENOTFOUND', 'task %s changed since you opened it: it is no longer in the ' ..
    'failed set (requeued or dropped meanwhile)', id)
end
if rec and rec.undecodable then
  audit(cfg, who, 'replace', detail, 'refused: undecodable')
  return err('DQ_EINVAL', 'undecodable, can only be dropped: %s', id)
end
if not e or rec.raw ~= seen or rec.at ~= seen_ms then
  audit(cfg, who, 'replace', detail, 'refused: changed')
  return err('DQ_ENOTFOUND', 'task %s changed since you opened it: it failed again ' ..
    '(attempt %s, %s); nothing replaced', id, tostring(e and e.attempt), tostring(rec and rec.reason))
end
e.payload = payload
e.attempt = 0
e.deadline = nil
hist_requeued(e, rec)
schedule(e, now + delay)
group_remove(tk, rec) -- out of its error group (PROTOCOL 4.6)
redis.call('HDEL', K_FAILED, tk)
redis.call('ZREM', K_FAILIDX, tk)
redis.call('HINCRBY', K_STATS, 'requeued', 1)
roll.add('q', 1) -- history (PROTOCOL.md 13)
roll.flush(cfg.history_minutes, now)
audit(cfg, who, 'replace', detail, 'ok: requeued with the new payload')
return {1}
