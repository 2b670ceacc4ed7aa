-- overview: what one row of the all-queues overview needs (`delayq queues`, the
-- inspector's Overview), in one read-only call per queue, so a refresh of N queues is N
-- calls, pipelined (docs/PROTOCOL.md 5.15a).
-- KEYS: the eleven queue keys (see lib.lua); reads sched, inflight, failidx, config and
--   the derived pause and tally HASHes and beats ZSET, workers HASH.
-- ARGV: none.
-- Reply: {now, due, future, far future, in flight, failed, expired leases, oldest due age
--   ms (0 if nothing is due), far_future_ms, then the pause: paused (0|1), since ms (-1),
--   until ms (-1 not paused, 0 until resumed), by, reason ('' when not paused), then the
--   verdict's window as stats returns it: window ms, elapsed ms, done, failed, retried;
--   then the thresholds alert_oldest_due_ms, alert_far_future, alert_fail_pct,
--   alert_fail_per_min, alert_memory_pct; then the workers as `workers` counts them:
--   registered, live, lost, latest beat ms (-1: none), handlers hung on live workers, the
--   live worker with the most hung ('' when none); then k (10) and k done counts and k
--   failed counts per minute of server time, oldest first, the current minute last}.
--   Then 1 while a throttle (throttle.lua) is in force, else 0. Then the fields of the
--   queue's partition map (HLEN dq:{Q}:parts; 0: not partitioned), so the client reads
--   the other partitions only for a partitioned queue. Readers ignore elements past these.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(log N + W): ZCOUNT, ZCARD, HMGET and ZRANGE, and the W <= 1000 worker
--   entries with the latest beats (one ZREVRANGE, one HMGET); no error groups.
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('overview', [[HMGET config pause tally workers TIME ZCARD beats failidx
  inflight sched ZCOUNT inflight sched ZRANGE sched ZREVRANGE beats HLEN parts]])
if gate then return gate end
local cfg = config()
local now = now_ms()
local due = redis.call('ZCOUNT', K_SCHED, '-inf', dec(now))
local out = {now, due, redis.call('ZCARD', K_SCHED) - due,
  redis.call('ZCOUNT', K_SCHED, '(' .. dec(now + cfg.far_future_ms), '+inf'),
  redis.call('ZCARD', K_INFLIGHT), redis.call('ZCARD', K_FAILIDX),
  redis.call('ZCOUNT', K_INFLIGHT, '-inf', '(' .. dec(now))}
local first = next_due()
out[#out + 1] = (first >= 0 and first <= now) and now - first or 0
out[#out + 1] = cfg.far_future_ms
local p = pause_get(now)
local tail = {0, -1, -1, '', ''}
if p then tail = {1, p.since, p.till, p.by, p.reason} end
for i = 1, 5 do
  out[#out + 1] = tail[i]
end
-- the tally ring (lib.lua): the verdict's window (k minutes) and the sparkline's 10, in
-- one HMGET of the larger of the two
local k, spark = math.ceil(cfg.alert_window_ms / 60000), 10
local done, failed, retried = tally_read(now, math.max(k, spark))
local wd, wf, wr = 0, 0, 0
for i = 0, k - 1 do
  wd, wf, wr = wd + done[i], wf + failed[i], wr + retried[i]
end
for _, x in ipairs({k * 60000, (k - 1) * 60000 + now % 60000, wd, wf, wr, cfg.alert_oldest_due_ms,
  cfg.alert_far_future, cfg.alert_fail_pct, cfg.alert_fail_per_min, cfg.alert_memory_pct}) do
  out[#out + 1] = x
end
-- the workers, counted as workers.lua counts them (lost after worker_lost_ms, else after
-- three of the worker's own beat intervals)
local beats = redis.call('ZREVRANGE', K_BEATS, 0, DQ_STEP_MAX - 1, 'WITHSCORES')
local names = {}
for i = 1, #beats, 2 do
  names[#names + 1] = beats[i]
end
local recs = {}
if #names > 0 then recs = redis.call('HMGET', K_WORKERS, unpack(names)) end
local live, lost, hung, most, worst = 0, 0, 0, 0, ''
for i, name in ipairs(names) do
  local w = worker_decode(recs[i])
  local after = cfg.worker_lost_ms
  if after == 0 then after = 3 * (w and w.beat > 0 and w.beat or 30000) end
  if now - tonumber(beats[2 * i]) > after then
    lost = lost + 1
  else
    live = live + 1
    local h = w and w.hung or 0
    hung = hung + h
    if h > most then most, worst = h, name end
  end
end
out[#out + 1] = redis.call('ZCARD', K_BEATS)
out[#out + 1] = live
out[#out + 1] = lost
out[#out + 1] = tonumber(beats[2]) or -1
out[#out + 1] = hung
out[#out + 1] = worst
out[#out + 1] = spark
for i = spark - 1, 0, -1 do
  out[#out + 1] = done[i]
end
for i = spark - 1, 0, -1 do
  out[#out + 1] = failed[i]
end
-- the queue's throttle (PROTOCOL.md 5.15a, 8.4): 1 while one is in force (the config read
-- above has its fields: no command), else 0; delayq queues and the Overview then show T
out[#out + 1] = (cfg.throttle_until == 0 or cfg.throttle_until > now) and 1 or 0
-- a partitioned queue (PROTOCOL.md 14): the client adds its other partitions' rows
local K_PARTS = K_PREFIX .. 'parts' -- the queue's partition map (config.lua)
out[#out + 1] = redis.call('HLEN', K_PARTS)
return out
