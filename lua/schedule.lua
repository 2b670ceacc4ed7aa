-- schedule: defines, removes, pauses and resumes a periodic schedule (operator action,
-- audited; PROTOCOL.md 5.30). A schedule fires inside claim (lib.lua sched_fire); this
-- script only writes its definition and arms its next firing.
-- KEYS: the eleven queue keys (see lib.lua); writes the derived sdefs, stpl, snext and
--   slow keys, audit; publishes on wake (a new earliest firing wakes idle workers).
-- ARGV: [1] 'add' | 'rm' | 'pause' | 'resume', [2] who, [3] name (1..100 bytes of
--   [A-Za-z0-9_.:-]); 'add' then: [4] spec as shown ('' for --every), [5] zone ('' for
--   --every), [6] every ms (0 for cron; else 1..31622400000, 366 days), [7] the
--   next cron firings, comma-separated ascending ms, computed by the caller (1..16 of
--   them; '' for --every), [8] envelope template with a nil id (enqueue.lua's form).
-- Reply: {next firing ms (-1: none, paused), changed (add: 1 replaced an existing one;
--   pause/resume: 1 if it was not already so; rm: 1)}.
-- Errors: DQ_EINVAL naming the argument and its limit; DQ_ENOTFOUND for an unknown name.
-- Complexity: O(log S + P) for S schedules, P the payload bytes.
local gate = operator_gate('schedule', [[HDEL sdefs stpl HEXISTS sdefs HGET sdefs HLEN sdefs
  HMGET config HSET sdefs stpl PUBLISH wake TIME XADD audit ZADD slow snext ZCARD slow ZRANGE
  snext ZREM slow snext]])
if gate then return gate end
local op, who, name = ARGV[1], ARGV[2], ARGV[3]
if op ~= 'add' and op ~= 'rm' and op ~= 'pause' and op ~= 'resume' then
  return err('DQ_EINVAL', 'schedule: op %q is not add, rm, pause or resume', tostring(op))
end
if not name or #name < 1 or #name > SCHED_NAME_MAX or string.find(name, '[^%w_.:-]') then
  return err('DQ_EINVAL', 'schedule name: %q must be 1..%d bytes of A-Z a-z 0-9 _ . : -',
    tostring(name), SCHED_NAME_MAX)
end
local cfg = config_of({'audit_retention', 'max_payload'})
local now = now_ms()
local r = sched_decode(redis.call('HGET', K_SDEFS, name))
local what = name

if op == 'add' then
  local spec, zone, every, fires, tpl = ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8]
  if not every or every < 0 or every > 31622400000 or every ~= math.floor(every) then
    return err('DQ_EINVAL', 'every: %q ms is not in 0..31622400000 (366 days)', tostring(ARGV[6]))
  end
  local list = {}
  for f in string.gmatch(fires or '', '[^,]+') do
    local t = tonumber(f)
    if not t or t ~= math.floor(t) or t < 0 or (#list > 0 and t <= list[#list]) then
      return err('DQ_EINVAL', 'fires: %q is not an ascending list of ms', fires)
    end
    list[#list + 1] = t
  end
  if #list > 16 or (every == 0 and #list == 0) or (every > 0 and #list > 0) then
    return err('DQ_EINVAL', 'fires: %d firings; expected 1..16 for cron, none for every', #list)
  end
  if not tpl or not env_template(tpl, '') then
    local _, why = env_template(tpl or '', '')
    return err('DQ_EINVAL', 'envelope: %s', why)
  end
  local t = env_template(tpl, '')
  if t.payload_len > cfg.max_payload then
    return err('DQ_EINVAL', 'payload: %d bytes is over the limit of %d bytes (max_payload)',
      t.payload_len, cfg.max_payload)
  end
  if not r and redis.call('HLEN', K_SDEFS) >= DQ_CALL_MAX then
    return err('DQ_EINVAL', 'schedules: the queue has %d, the limit', DQ_CALL_MAX)
  end
  local ahead = {} -- the caller's clock may run ahead of the server's: only the future
  for _, f in ipairs(list) do
    if f > now then ahead[#ahead + 1] = f end
  end
  list = ahead
  local n = {spec = spec, tz = zone, every = every, anchor = now, paused = false,
    fires = list, created = now, updated = now, by = who, runs = 0, last = -1, last_id = '',
    late = 0, missed = 0}
  if r then
    n.created, n.runs, n.last, n.last_id = r.created, r.runs, r.last, r.last_id
    n.late, n.missed, n.paused = r.late, r.missed, r.paused
  end
  redis.call('HSET', K_STPL, name, tpl)
  redis.call('HSET', K_SDEFS, name, cjson.encode(n))
  if every == 0 and #list <= SCHED_LOW then
    redis.call('ZADD', K_SLOW, 0, name)
    redis.call('ZADD', K_SNEXT, 0, '')
  end
  local first = sched_soonest()
  local nxt = sched_arm(name, n, now)
  if nxt >= 0 and (first < 0 or nxt < first) then wake(dec(nxt)) end
  what = name .. ' ' .. (every > 0 and ('every ' .. dec(every) .. 'ms') or
    (spec .. (zone ~= '' and ' ' .. zone or '')))
  audit(cfg, who, 'schedule add', what, 'ok: next ' .. dec(nxt) .. (r and ', replaced' or ''))
  return {nxt, r and 1 or 0}
end

if not r then
  if redis.call('HEXISTS', K_SDEFS, name) == 1 then
    -- a record that does not decode can still be removed
    if op ~= 'rm' then return err('DQ_EINVAL', 'schedule %q: its record is malformed', name) end
  else
    return err('DQ_ENOTFOUND', 'schedule %q: no such schedule', name)
  end
end
if op == 'rm' then
  redis.call('HDEL', K_SDEFS, name)
  redis.call('HDEL', K_STPL, name)
  redis.call('ZREM', K_SNEXT, name)
  sched_unlow(name)
  audit(cfg, who, 'schedule rm', name, 'ok')
  return {-1, 1}
end
local want = op == 'pause'
local changed = r.paused ~= want
r.paused, r.updated = want, now
if not want and r.every == 0 then
  local _ = sched_pass(name, r, now) -- a resume does not fire what passed while paused
end
redis.call('HSET', K_SDEFS, name, cjson.encode(r))
if want then sched_unlow(name) end -- no top-ups while paused
local first = sched_soonest()
local nxt = sched_arm(name, r, now)
if nxt >= 0 and (first < 0 or nxt < first) then wake(dec(nxt)) end
audit(cfg, who, 'schedule ' .. op, name, changed and 'ok' or 'ok: already ' .. op .. 'd')
return {nxt, changed and 1 or 0}
