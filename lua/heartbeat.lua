-- heartbeat: a worker tells the queue's worker registry it is alive. 'beat' moves its
-- last-beat time (and rewrites its record when fields are given); 'check' does the same
-- and also reports what an idle worker would otherwise poll for (the next due time,
-- the earliest lease, the pause) and prunes entries silent for worker_prune_ms; 'look'
-- is 'check' without the prune (and its config read: delayq's idle worker prunes on every
-- other look, which keeps it within W4's budget of commands); 'gone' removes the entry
-- (a clean exit).
-- KEYS: the eleven queue keys (see lib.lua); writes the derived workers HASH and beats
--   ZSET; 'check' also reads sched, inflight, config and the derived pause HASH.
-- ARGV: [1] 'beat' | 'check' | 'look' | 'gone', [2] worker name (1..200 bytes), then either
--   nothing (the record is unchanged: only the beat time moves, if the entry exists) or
--   the record's 12 fields: [3] host, [4] pid, [5] version, [6] started ms ('': now),
--   [7] beat interval ms (1..86400000), [8] concurrency, [9] busy, [10] done,
--   [11] retried, [12] failed (integers >= 0), [13] command (cut at 1024 bytes),
--   [14] draining (0|1), and optionally [15] hung (handlers still running well past
--   their time limit; integer >= 0; absent: 0).
-- Reply: {now, registered (1: the entry exists now; 0: it did not and no fields were
--   given: send them), started ms (-1: not known), next due (-1: nothing scheduled),
--   earliest lease deadline (-1: nothing in flight), paused until (-1: not paused, 0:
--   until resumed, else ms), pruned, schedules low ('check', and 'beat' with the record:
--   1 when a cron schedule's list of firings wants a top-up, dq_schedule_refill,
--   PROTOCOL.md 5.30; else 0)}; the three
--   check fields are -2 for 'beat' and 'gone' (and pruned is 0 for 'look'). The next due time counts the next
--   firing of a periodic schedule (sdefs, snext), so an idle worker wakes for it.
-- Errors: DQ_EINVAL naming the argument.
-- Complexity: O(log W) for W registered workers; 'check' adds O(log N) and prunes at
--   most 100 entries per call.
-- Flags: allow-oom (runs at maxmemory: one record per worker, rewritten in place, pruned;
--   docs/OPERATIONS.md).
local gate = worker_gate('heartbeat', [[EXISTS roll HDEL stats workers HINCRBY roll HMGET
  config pause HSET workers PEXPIREAT roll TIME ZADD beats ZRANGE inflight sched snext
  ZRANGEBYSCORE beats ZREM beats]])
if gate then return gate end
allow_oom()
local now = now_ms()
local mode, name = ARGV[1], ARGV[2]
if mode ~= 'beat' and mode ~= 'check' and mode ~= 'look' and mode ~= 'gone' then
  return err('DQ_EINVAL', 'heartbeat: mode %q is not beat, check, look or gone', tostring(mode))
end
if not name or #name < 1 or #name > DQ_ID_MAX then
  return err('DQ_EINVAL', 'worker name: must be 1..%d bytes', DQ_ID_MAX)
end
if mode == 'gone' then
  redis.call('ZREM', K_BEATS, name)
  redis.call('HDEL', K_WORKERS, name)
  return {now, 0, -1, -2, -2, -2, 0, 0}
end

local registered, started = 1, -1
if #ARGV == 2 then
  -- XX: a pruned (or never registered) entry is not brought back without its record
  if redis.call('ZADD', K_BEATS, 'XX', 'CH', dec(now), name) == 0 then registered = 0 end
elseif #ARGV == 14 or #ARGV == 15 then
  local w = {host = ARGV[3], version = ARGV[5], command = truncate(ARGV[13], WORKER_COMMAND_MAX),
    draining = ARGV[14] == '1'}
  -- in argument order, so the first bad one is the one named
  local num = {{'pid', 4}, {'started', 6}, {'beat', 7}, {'conc', 8}, {'busy', 9}, {'done', 10},
    {'retried', 11}, {'failed', 12}, {'hung', 15}}
  for _, fi in ipairs(num) do
    local f, i = fi[1], fi[2]
    local v = tonumber(ARGV[i])
    if f == 'started' and ARGV[i] == '' then v = now end
    if f == 'hung' and ARGV[i] == nil then v = 0 end
    if not v or v < 0 or v ~= math.floor(v) or v >= 9007199254740992 then
      return err('DQ_EINVAL', 'heartbeat: %s: %q is not an integer >= 0', f, ARGV[i])
    end
    w[f] = v
  end
  if w.beat < 1 or w.beat > 86400000 then
    return err('DQ_EINVAL', 'heartbeat: beat interval: %s ms is not in 1..86400000', dec(w.beat))
  end
  redis.call('HSET', K_WORKERS, name, worker_encode(w))
  redis.call('ZADD', K_BEATS, dec(now), name)
  started = w.started
else
  return err('DQ_EINVAL', 'heartbeat: %d arguments; expected 2, 14 or 15', #ARGV)
end
if mode == 'beat' then
  -- a worker that ran tasks since its last beat sends its record: it is told of a top-up
  -- (an idle one learns it from its check)
  local low = 0
  if #ARGV == 14 then low = redis.call('ZRANGE', K_SNEXT, 0, 0)[1] == '' and 1 or 0 end
  return {now, registered, started, -2, -2, -2, 0, low}
end

local lease = redis.call('ZRANGE', K_INFLIGHT, 0, 0, 'WITHSCORES')
local p = pause_get(now)
local old, hm = {}, nil
if mode == 'check' then
  local c = config_of({'worker_prune_ms', 'history_minutes'})
  local prune = c.worker_prune_ms
  hm = c.history_minutes
  old = redis.call('ZRANGEBYSCORE', K_BEATS, '-inf', '(' .. dec(now - prune), 'LIMIT', 0, 100)
end
for _, n in ipairs(old) do
  redis.call('ZREM', K_BEATS, n)
  redis.call('HDEL', K_WORKERS, n)
end
local due = next_due()
-- history (PROTOCOL.md 13): tasks are due and no call has opened this minute (a paused
-- or starved queue): the backlog sample is taken here
if due >= 0 and due <= now then roll.touch(hm, now) end
local fire, low = sched_soonest()
if fire >= 0 and (due < 0 or fire < due) then due = fire end
return {now, registered, started, due, tonumber(lease[2]) or -1, p and p.till or -1, #old, low}
