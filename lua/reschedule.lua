-- reschedule: moves one scheduled task to another due time (operator action), without
-- touching its envelope: payload, seq, attempt and deadline stay as they are (a
-- deadline is absolute: a task moved past it expires at its claim). Recorded in the
-- audit log. Idle workers are woken when the new time is before the earliest one.
-- KEYS: the eleven queue keys (see lib.lua); writes sched, ids, audit; publishes on wake.
-- ARGV: [1] id, [2] envelope bytes or '': for a generated id, the member find.lua found
--   (a generated id has no index); a caller-chosen id is found by its index,
--   [3] time: 'd' .. delay ms or 'a' .. epoch ms (a past time means now), [4] who.
-- Reply: {old due ms, new due ms}.
-- Errors: DQ_ENOTFOUND naming where the task is instead (in flight, failed, or nowhere);
--   DQ_EINVAL for a bad time, or one past max_delay_ms.
-- Complexity: O(log^2 N) for a caller-chosen id (member_at), O(log N) for a generated one.
local gate = operator_gate('reschedule', [[HEXISTS failed running HGET ids HMGET config HSET ids
  PUBLISH wake TIME XADD audit ZADD sched ZCOUNT sched ZRANGE sched ZSCORE sched]])
if gate then return gate end
local id, seen, spec, who = ARGV[1] or '', ARGV[2] or '', ARGV[3] or '', ARGV[4] or ''
if #ARGV ~= 4 or #id < 1 or #id > DQ_ID_MAX then
  return err('DQ_EINVAL', 'reschedule: %d arguments; expected id (1..%d bytes), envelope, ' ..
    'time, who', #ARGV, DQ_ID_MAX)
end
local cfg = config()
local now = now_ms()
local tv, mode = tonumber(string.sub(spec, 2)), string.byte(spec, 1)
if not tv or tv ~= math.floor(tv) or (mode ~= 100 and mode ~= 97) then -- 'd', 'a'
  return err('DQ_EINVAL', 'time: %q is not d<ms> or a<ms>', spec)
end
local due = now + tv
if mode == 97 then due = tv end
if due < now then due = now end
if due - now > cfg.max_delay_ms then
  return err('DQ_EINVAL', 'delay: %s ms is over the limit of %s ms (max_delay_ms)',
    dec(due - now), dec(cfg.max_delay_ms))
end
local m, old, seq, caller = nil, nil, nil, not string.match(id, '^%d+$')
if caller then
  local d
  d, seq = ids_get(id)
  m = d and member_at(d, seq)
  old = m and d
elseif seen ~= '' then
  -- the envelope must be the task the id names, not any member
  local e = env_decode(seen)
  old = e and not e.id and dec(e.seq) == id and tonumber(redis.call('ZSCORE', K_SCHED, seen))
  m = old and seen
end
local detail = id .. ' due ' .. dec(due)
if not m then
  local where = 'it is not scheduled'
  if resolve(K_RUNNING, id) then
    where = 'it is in flight (cancel it, or wait until it is done)'
  elseif resolve(K_FAILED, id) then
    where = 'it is failed (requeue it with a delay instead)'
  end
  audit(cfg, who, 'reschedule', detail, 'refused: not scheduled')
  return err('DQ_ENOTFOUND', 'task %s: %s', id, where)
end
local first = next_due()
redis.call('ZADD', K_SCHED, dec(due), m)
if caller then redis.call('HSET', K_IDS, id, dec(due) .. ':' .. dec(seq)) end
audit(cfg, who, 'reschedule', detail, 'ok: was due ' .. dec(old))
if first < 0 or due < first then wake(dec(due)) end
return {old, due}
