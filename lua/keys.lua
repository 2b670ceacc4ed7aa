-- keys: the task keys (the envelope's "k") with the most due, parked, in-flight and failed
-- tasks, for `delayq keys` (docs/PROTOCOL.md 4.10 and 5.31): which customer is this
-- backlog? Parked and in-flight counts are exact (kpark, kin); due and failed counts come
-- from bounded samples, as the sets are not indexed by key: the oldest KEYS_SAMPLE due
-- members of sched and the newest KEYS_SAMPLE failures.
-- KEYS: the eleven queue keys (see lib.lua); reads sched, failidx, failed, stats, and the
--   per-key keys kin, kpark and kq:<key>.
-- ARGV: [1] how many keys to list (1..100).
-- Reply: {now, due members looked at, due in all (ZCOUNT), failures looked at, failed in
--   all, parked in all, n, then 6 per key, most tasks first (ties by key): key, due (in
--   the sample), parked, in flight, failed (in the sample), oldest due ms (the earliest
--   due time seen of its scheduled or parked tasks; -1 none)}.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(S log N) for the samples (S = 2000 members and records looked at), plus
--   O(K log N) for K <= 100 keys listed, plus O(F) for F keys in flight when F <= 1000.
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('keys', [[HGET kin stats HGETALL kin HLEN kin HMGET failed TIME ZCARD
  failidx ZCOUNT sched ZRANGE kq ZRANGEBYSCORE sched ZREVRANGE failidx kpark]])
if gate then return gate end
local limit = tonumber(ARGV[1])
if not limit or limit < 1 or limit > 100 or limit ~= math.floor(limit) then
  return err('DQ_EINVAL', 'limit: %q is not in 1..100', tostring(ARGV[1]))
end
local KEYS_SAMPLE = 1000
local now = now_ms()
local by, order = {}, {}
local function row(k)
  local r = by[k]
  if not r then
    r = {key = k, due = 0, parked = 0, inflight = 0, failed = 0, oldest = -1}
    by[k] = r
    order[#order + 1] = r
  end
  return r
end
local function older(r, due)
  if r.oldest < 0 or due < r.oldest then r.oldest = due end
end
-- the oldest due members of sched (keyed ones are v2: others cost one byte compare)
local due = redis.call('ZRANGEBYSCORE', K_SCHED, '-inf', dec(now), 'WITHSCORES', 'LIMIT', 0,
  KEYS_SAMPLE)
for i = 1, #due, 2 do
  if string.byte(due[i], 1) == 154 then
    local tk, _, _, k = env_peek(due[i])
    if tk and k then
      local r = row(k)
      r.due = r.due + 1
      older(r, tonumber(due[i + 1]))
    end
  end
end
-- the newest failures
local fks = redis.call('ZREVRANGE', K_FAILIDX, 0, KEYS_SAMPLE - 1)
local recs = #fks > 0 and redis.call('HMGET', K_FAILED, unpack(fks)) or {}
for i = 1, #fks do
  local f = recs[i] and fail_decode(recs[i])
  if f and not f.undecodable and string.byte(f.raw, 1) == 154 then
    local tk, _, _, k = env_peek(f.raw)
    if tk and k then
      local r = row(k)
      r.failed = r.failed + 1
    end
  end
end
-- exact: the keys with the most parked, and the in-flight counts
local top = redis.call('ZREVRANGE', K_KPARK, 0, limit - 1, 'WITHSCORES')
for i = 1, #top, 2 do
  row(top[i]).parked = tonumber(top[i + 1])
end
if redis.call('HLEN', K_KIN) <= KEYS_SAMPLE then
  local kin = redis.call('HGETALL', K_KIN)
  for i = 1, #kin, 2 do
    row(kin[i]).inflight = tonumber(kin[i + 1]) or 0
  end
else
  for _, r in ipairs(order) do
    r.inflight = tonumber(redis.call('HGET', K_KIN, r.key)) or 0
  end
end
table.sort(order, function(a, b)
  local x, y = a.due + a.parked + a.inflight + a.failed, b.due + b.parked + b.inflight + b.failed
  if x ~= y then return x > y end
  return a.key < b.key
end)
local stats = redis.call('HGET', K_STATS, 'parked')
local out = {now, #due / 2, redis.call('ZCOUNT', K_SCHED, '-inf', dec(now)), #fks,
  redis.call('ZCARD', K_FAILIDX), tonumber(stats) or 0, 0}
for i = 1, math.min(limit, #order) do
  local r = order[i]
  if r.parked > 0 then -- its earliest parked task (a parked task is due: it waited longest)
    local z = redis.call('ZRANGE', K_KQ .. r.key, 0, 0, 'WITHSCORES')
    if z[2] then older(r, tonumber(z[2])) end
  end
  out[#out + 1] = r.key
  out[#out + 1] = r.due
  out[#out + 1] = r.parked
  out[#out + 1] = r.inflight
  out[#out + 1] = r.failed
  out[#out + 1] = r.oldest
  out[7] = out[7] + 1
end
return out
