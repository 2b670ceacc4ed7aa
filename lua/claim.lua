-- claim: moves up to batch due tasks to in-flight under a lease.
-- KEYS: the eleven queue keys (see lib.lua); writes sched, ids, inflight, running, and
--   failed/failidx/stats for members that cannot run.
-- ARGV: [1] batch (1..1000), [2] lease ms (1..86400000), [3] worker name.
-- Reply: {now ms, next due ms (-1 if nothing is scheduled), moved to failed,
--   envelope 1, due 1, envelope 2, due 2, ...} in due order, ties in enqueue order.
--   A due member that is not a valid envelope goes to failed as "undecodable" (raw
--   bytes kept); one whose deadline passed goes to failed as "expired".
-- Publishes 'lease:<deadline ms>' on the wake channel when its lease is now the earliest
-- (workers then know when to reap it, section 10 of docs/PROTOCOL.md).
-- While the queue is paused (pause.lua) it claims nothing and moves nothing; the reply is
--   then exactly four elements {now, next due, 0, paused until (0: until resumed, else
--   server ms)}, so a worker knows how long to sleep. An unpaused reply never has four.
-- Complexity: O(log N + batch log N).
local cfg = config()
local now = now_ms()
local batch, lease, worker = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
if not batch or batch < 1 or batch > DQ_CALL_MAX or batch ~= math.floor(batch) then
  return err('DQ_EINVAL', 'batch: %q is not in 1..%d', ARGV[1], DQ_CALL_MAX)
end
if not lease or lease < 1 or lease > 86400000 or lease ~= math.floor(lease) then
  return err('DQ_EINVAL', 'lease: %q ms is not in 1..86400000', ARGV[2])
end
local paused = pause_get(now)
if paused then return {now, next_due(), 0, paused.till} end

local items = redis.call('ZRANGEBYSCORE', K_SCHED, '-inf', dec(now), 'WITHSCORES',
  'LIMIT', 0, batch)
local out = {now, 0, 0}
local moved = 0
-- The earliest lease before this claim: when ours comes first, idle workers are told,
-- so they reap it should this worker die (they only know the leases they have seen).
local first_lease = -1
if #items > 0 then
  local f = redis.call('ZRANGE', K_INFLIGHT, 0, 0, 'WITHSCORES')
  if #f == 2 then first_lease = tonumber(f[2]) end
end
local leased = false
for i = 1, #items, 2 do
  local m, due = items[i], tonumber(items[i + 1])
  local e = env_decode(m)
  -- destination first: if a write fails (a key of the wrong type), the task is still
  -- where it was
  if not e then
    to_failed(cfg, undecodable_key(m), m, 'undecodable',
      'scheduled member is not a delayq v1 envelope', '', now, worker, true)
    moved = moved + 1
  elseif e.deadline and now > e.deadline then
    to_failed(cfg, tkey(e), m, 'expired',
      string.format('claimed %s ms after its deadline', dec(now - e.deadline)), '', now,
      worker, false, 'expired')
    moved = moved + 1
  else
    local tk = tkey(e)
    redis.call('HSET', K_RUNNING, tk, run_encode(m, worker, now, due))
    redis.call('ZADD', K_INFLIGHT, dec(now + lease), tk)
    leased = true
    out[#out + 1] = m
    out[#out + 1] = due
  end
  redis.call('ZREM', K_SCHED, m)
  if e and e.id then redis.call('HDEL', K_IDS, e.id) end
end
out[2] = next_due()
out[3] = moved
if leased and (first_lease < 0 or now + lease < first_lease) then
  redis.call('PUBLISH', K_WAKE, 'lease:' .. dec(now + lease))
end
return out
