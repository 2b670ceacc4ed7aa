-- throttle: sets or lifts a queue's live throttle, a temporary rate and/or concurrency
-- limit over the configured ones (the tighter wins; PROTOCOL.md 8.4). It ends by server
-- time at its end without anyone acting (claim reads throttle_until), or when lifted.
-- Recorded in the audit log.
-- KEYS: the eleven queue keys (see lib.lua); writes config (the throttle_* fields, which
--   config does not list) and audit; publishes on wake.
-- ARGV: [1] 'set' or 'off', [2] who (1..200 bytes), then for 'set': [3] rate, tasks a
--   minute (0: none, else 1..600000000), [4] concurrency (0: none, else 1..1000000), at
--   least one of them not 0, [5] for ms (0: until lifted, else 1..315360000000), [6]
--   reason (0..200 bytes).
-- Reply: {now, until (-1: no throttle, 0: until lifted, else server ms), was throttled
--   (0|1) before this call}.
-- A throttle already in force is replaced (new who, since, until and reason). Both set
--   and off publish a due time on the wake channel: a looser limit lets idle workers
--   claim at once.
-- Errors: DQ_EINVAL naming the argument. Complexity: O(1).
-- Flags: allow-oom (runs at maxmemory: six config fields and one audit entry, the stream
--   capped; an operator must be able to throttle a queue that is draining).
local gate = operator_gate('throttle', [[HDEL config stats HGET config HMGET config HSET config
  PUBLISH wake TIME XADD audit]])
if gate then return gate end
allow_oom()
local cfg = config()
local now = now_ms()
local op, who = ARGV[1], ARGV[2]
if op ~= 'set' and op ~= 'off' then
  return err('DQ_EINVAL', 'throttle: operation %q is not set or off', tostring(op))
end
if not who or #who < 1 or #who > DQ_ID_MAX then
  return err('DQ_EINVAL', 'who: must be 1..%d bytes', DQ_ID_MAX)
end
local before = cfg.throttle_until == 0 or cfg.throttle_until > now
local was = before and 1 or 0
local function rate_text(per_min)
  if per_min % 60 == 0 then return dec(per_min / 60) .. '/s' end
  return dec(per_min) .. '/m'
end
local function describe(rate, conc)
  local t = {}
  if rate > 0 then t[#t + 1] = 'rate ' .. rate_text(rate) end
  if conc > 0 then t[#t + 1] = 'concurrency ' .. dec(conc) end
  return table.concat(t, ' ')
end
if op == 'off' then
  local detail = ''
  if before then
    detail = describe(cfg.throttle_rate, cfg.throttle_concurrency)
    local by = redis.call('HGET', K_CONFIG, 'throttle_by')
    if by then detail = detail .. ' by ' .. by end
  end
  redis.call('HDEL', K_CONFIG, 'throttle_rate', 'throttle_concurrency', 'throttle_until',
    'throttle_since', 'throttle_by', 'throttle_reason')
  audit(cfg, who, 'throttle off', detail, before and 'ok' or 'ok: was not throttled')
  wake(dec(now))
  return {now, -1, was}
end
local rate, conc, for_ms = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local reason = ARGV[6] or ''
if not rate or rate < 0 or rate > 600000000 or rate ~= math.floor(rate) then
  return err('DQ_EINVAL', 'rate: %q tasks a minute is not in 0..600000000 (0: none)',
    tostring(ARGV[3]))
end
if not conc or conc < 0 or conc > 1000000 or conc ~= math.floor(conc) then
  return err('DQ_EINVAL', 'concurrency: %q is not in 0..1000000 (0: none)', tostring(ARGV[4]))
end
if rate == 0 and conc == 0 then
  return err('DQ_EINVAL', 'throttle: give a rate or a concurrency (or lift it with off)')
end
if not for_ms or for_ms < 0 or for_ms > 315360000000 or for_ms ~= math.floor(for_ms) then
  return err('DQ_EINVAL', 'for: %q ms is not in 0..315360000000 (0: until lifted)',
    tostring(ARGV[5]))
end
if #reason > PAUSE_REASON_MAX then
  return err('DQ_EINVAL', 'reason: %d bytes is over the limit of %d bytes', #reason,
    PAUSE_REASON_MAX)
end
local till = for_ms > 0 and now + for_ms or 0
redis.call('HSET', K_CONFIG, 'throttle_rate', dec(rate), 'throttle_concurrency', dec(conc),
  'throttle_until', dec(till), 'throttle_since', dec(now), 'throttle_by', who,
  'throttle_reason', reason)
local detail = describe(rate, conc) ..
  (till > 0 and (' for ' .. dec(for_ms) .. 'ms until ' .. dec(till)) or ' until lifted')
if reason ~= '' then detail = detail .. ': ' .. reason end
audit(cfg, who, 'throttle', detail, before and 'ok: replaced the throttle' or 'ok')
wake(dec(now))
return {now, till, was}
