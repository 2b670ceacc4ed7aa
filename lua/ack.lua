-- ack: completes claimed tasks; each leaves in-flight for good.
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, stats, tally, and
--   the derived uniq ZSET for a task with a unique-for window (lib.lua uniq_acked), and
--   done/doneidx when the queue keeps done tasks (done_retention or done_retention_ms
--   > 0; PROTOCOL.md 4.7).
-- ARGV: 3 per task, 1..1000 tasks: task key (generated id, or "c:" .. caller-chosen id),
--   attempt as claimed, and the claim's server time (claim reply "now"): with the
--   attempt, the fencing token; then optionally the done flag of the claim that leased
--   them (claim's 'd', PROTOCOL.md 4.7): '1' when the queue kept done tasks then, and
--   ack reads done_retention and done_retention_ms and keeps them; absent or '0': ack
--   reads no config.
-- Reply: with one task, 1. With more, an array with one entry per task, in order: 1 when
--   acked, else the DQ_ELEASE / DQ_EPROTO error text of that task (the others are
--   acked all the same: each task's check stands alone).
-- Errors: with one task, DQ_ELEASE when the caller no longer holds the lease (reaped,
--   or claimed again by another worker at a higher attempt); DQ_EINVAL for a bad count.
-- Complexity: O(k log N) for k tasks and N in flight: one HMGET, ZREM and HDEL for all;
--   with done retention also one HSET and ZADD for all, and a trim of at most k (by
--   count) or 1000 (by age).
-- Flags: allow-oom (runs at maxmemory: removes the task; the counters it bumps exist;
--   docs/OPERATIONS.md).
local flag = #ARGV % 3 == 1 and ARGV[#ARGV] or nil
local k = flag and (#ARGV - 1) / 3 or #ARGV / 3
if k < 1 or k > DQ_CALL_MAX or k ~= math.floor(k) or (flag and flag ~= '0' and flag ~= '1') then
  return err('DQ_EINVAL', 'ack: %d arguments; expected 3 per task, 1..%d tasks, then ' ..
    'optionally 0 or 1', #ARGV, DQ_CALL_MAX)
end
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = worker_gate('ack', [[HDEL running stats HGET running HINCRBY roll stats tally
  HMGET config running tally HSET tally LTRIM hist PEXPIREAT roll TIME ZADD uniq ZRANGE
  sched ZRANGEBYSCORE uniq ZREM inflight uniq]])
if gate then return gate end
-- done retention (PROTOCOL.md 4.7): only an ack whose claim saw it on reads the config
-- (once per call) and pays for the checks of its writes; one without it reads nothing
local keep, age = 0, 0
if flag == '1' then
  gate = worker_gate('ack_done', [[HMGET config HDEL done HSET done ZADD doneidx ZCARD doneidx
    ZCOUNT doneidx ZPOPMIN doneidx]])
  if gate then return gate end
  local c = config_of({'done_retention', 'done_retention_ms'})
  keep, age = c.done_retention, c.done_retention_ms
end
local tks, atts, clms = {}, {}, {}
for i = 0, k - 1 do
  tks[i + 1], atts[i + 1], clms[i + 1] = ARGV[3 * i + 1], ARGV[3 * i + 2], ARGV[3 * i + 3]
end
-- per-key limits (PROTOCOL.md 4.10): only an ack of a keyed task pays for the checks of
-- what its key's settle writes (the records are read once: settle_acks takes them)
local recs = redis.call('HMGET', K_RUNNING, unpack(tks))
if key_any(recs) then
  gate = worker_gate('ack_keys', [[HDEL kin HINCRBY kin HMGET config PUBLISH wake ZADD kpark
    sched ZCARD kpark ZPOPMIN kq ZRANGE sched ZREM kpark]])
  if gate then return gate end
end
allow_oom()
local kept = (keep > 0 or age > 0) and {} or nil
local res, done = settle_acks(tks, atts, clms, kept, recs)
if done > 0 then
  local now = now_ms()
  redis.call('HINCRBY', K_STATS, 'done', done)
  -- history (PROTOCOL.md 13): on or off is learnt from the tally ring's slot, which keeps
  -- history_minutes (read once a minute); each run's time is now less the claim time
  -- its fence named
  local hm = tally('d', done, now)
  if kept then keep_done(keep, age, now, kept) end
  if hm > 0 then
    roll.add('d', done)
    for i = 1, k do
      if res[i] == 1 then roll.run(now - tonumber(clms[i])) end
    end
    roll.flush(hm, now)
  end
end
if k == 1 then return res[1] end
local out = {}
for i = 1, k do
  out[i] = res[i] == 1 and 1 or res[i].err
end
return out
