-- pause: pauses or resumes a queue. While it is paused, claim hands out nothing;
-- enqueue, retry, reap, release and operator actions go on, and running tasks finish.
-- Recorded in the audit log.
-- KEYS: the eleven queue keys (see lib.lua); writes the derived pause HASH and audit;
--   publishes on wake.
-- ARGV: [1] 'pause' or 'resume', [2] who (1..200 bytes), then for 'pause': [3] for ms
--   (0: until resumed, else 1..315360000000), [4] reason (0..200 bytes).
-- Reply: {now, paused until (-1: not paused, 0: until resumed, else server ms),
--   was paused (0|1) before this call}.
-- A pause that is already in force is replaced (new who, since, until and reason). A
-- resume publishes 'resume' on the wake channel, so idle workers claim at once. A pause
-- publishes 'pause': a worker of an unpartitioned queue ignores it (claim tells it when
-- it next asks), one of a partitioned queue asks partition 0 at once, which holds its
-- claims from the other partitions (PROTOCOL.md 10.10).
-- Errors: DQ_EINVAL naming the argument. Complexity: O(1).
-- Flags: allow-oom (runs at maxmemory: a 4-field pause hash and one audit entry, the stream
--   capped; docs/OPERATIONS.md).
local gate = operator_gate('pause', [[DEL pause HDEL stats HMGET config pause HSET pause PUBLISH
  wake TIME XADD audit]])
if gate then return gate end
allow_oom()
local cfg = config()
local now = now_ms()
local op, who = ARGV[1], ARGV[2]
if op ~= 'pause' and op ~= 'resume' then
  return err('DQ_EINVAL', 'pause: operation %q is not pause or resume', tostring(op))
end
if not who or #who < 1 or #who > DQ_ID_MAX then
  return err('DQ_EINVAL', 'who: must be 1..%d bytes', DQ_ID_MAX)
end
local before = pause_get(now)
local was = before and 1 or 0
if op == 'resume' then
  redis.call('DEL', K_PAUSE)
  local detail = ''
  if before then
    detail = string.format('paused by %s since %s%s', before.by, dec(before.since),
      before.reason ~= '' and (': ' .. before.reason) or '')
  end
  audit(cfg, who, 'resume', detail, before and 'ok' or 'ok: was not paused')
  wake('resume')
  return {now, -1, was}
end
local for_ms, reason = tonumber(ARGV[3]), ARGV[4] or ''
if not for_ms or for_ms < 0 or for_ms > 315360000000 or for_ms ~= math.floor(for_ms) then
  return err('DQ_EINVAL', 'for: %q ms is not in 0..315360000000 (0: until resumed)',
    tostring(ARGV[3]))
end
if #reason > PAUSE_REASON_MAX then
  return err('DQ_EINVAL', 'reason: %d bytes is over the limit of %d bytes', #reason,
    PAUSE_REASON_MAX)
end
local till = 0
if for_ms > 0 then till = now + for_ms end
redis.call('HSET', K_PAUSE, 'by', who, 'since', dec(now), 'until', dec(till), 'reason', reason)
wake('pause')
local detail = till > 0 and ('for ' .. dec(for_ms) .. 'ms until ' .. dec(till)) or 'until resumed'
if reason ~= '' then detail = detail .. ': ' .. reason end
audit(cfg, who, 'pause', detail, before and ('ok: replaced the pause by ' .. before.by) or 'ok')
return {now, till, was}
