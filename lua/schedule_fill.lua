-- schedule_fill: a worker tops up the list of precomputed firings of a cron schedule
-- (PROTOCOL.md 5.30): Lua cannot evaluate time zones, so the C side computes the next
-- firings (dq_cron_next_n) when heartbeat says a list runs low, and stores them here.
-- KEYS: the eleven queue keys (see lib.lua); writes the derived sdefs, snext and slow.
-- ARGV: [1] name, [2] the record's updated ms as read (a redefinition since then wins:
--   the call does nothing), [3..] firings, ascending ms (1..16).
-- Reply: {firings listed now, next firing ms (-1: none)}; {-1, -1} when the record
--   changed or is gone (nothing written).
-- Complexity: O(log S + 16).
-- Flags: allow-oom (runs at maxmemory: rewrites one small record in place, so schedules
--   keep firing while the queue drains; docs/OPERATIONS.md).
local gate = worker_gate('schedule_fill', [[HDEL stats HGET sdefs HSET sdefs TIME ZADD snext
  ZCARD slow ZREM slow snext]])
if gate then return gate end
allow_oom()
local name, updated = ARGV[1], tonumber(ARGV[2])
if #ARGV < 3 or #ARGV > 18 then
  return err('DQ_EINVAL', 'schedule_fill: %d arguments; expected 3..18', #ARGV)
end
local now = now_ms()
local r = sched_decode(redis.call('HGET', K_SDEFS, name or ''))
if not r or r.every > 0 or r.updated ~= updated then return {-1, -1} end
local last = r.fires[#r.fires] or -1
for i = 3, #ARGV do
  local t = tonumber(ARGV[i])
  if not t or t ~= math.floor(t) or t < 0 then
    return err('DQ_EINVAL', 'schedule_fill: firing %q is not ms', ARGV[i])
  end
  if t > last and t > now and #r.fires < 16 then
    r.fires[#r.fires + 1] = t
    last = t
  end
end
redis.call('HSET', K_SDEFS, name, cjson.encode(r))
if #r.fires > SCHED_LOW then sched_unlow(name) end
return {#r.fires, sched_arm(name, r, now)}
