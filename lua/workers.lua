-- workers: the queue's worker registry, for `delayq workers` and the inspector: each
-- entry's record, its last beat and whether it is lost, the tasks it holds, and counts.
-- Read only.
-- KEYS: the eleven queue keys (see lib.lua); reads inflight, running, config and the
--   derived workers HASH and beats ZSET.
-- ARGV: [1] most workers to return (1..1000), [2] tasks per worker (0..100), [3] in-flight
--   tasks to look at for holders (0..1000, earliest lease first).
-- Reply: {now, registered, live, lost, in flight, in flight looked at, lost after ms
--   (worker_lost_ms; 0: three of each worker's beat intervals), n, then n workers of
--   18 + 2k elements: name, host, pid, version, started ms, beat interval ms, last beat ms,
--   lost (0|1), concurrency, busy, done, retried, failed, command, draining (0|1), hung
--   (handlers past their time limit, as of its last beat), held
--   (tasks it holds among those looked at), k, then k pairs: task id, claimed ms}.
--   live and lost count the 1000 entries with the latest beats; the n returned are the
--   first of those by name. A worker is lost when its last beat is older than the lost
--   time; an entry with no readable record counts a beat interval of 30 s.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(log W + 1000) entries and O(looked at) running records.
local function int_arg(i, lo, hi, what)
  local v = tonumber(ARGV[i])
  if not v or v < lo or v > hi or v ~= math.floor(v) then
    return nil, err('DQ_EINVAL', '%s: %q is not in %d..%d', what, tostring(ARGV[i]), lo, hi)
  end
  return v
end
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('workers', [[HMGET config running workers TIME ZCARD beats inflight ZRANGE
  inflight ZREVRANGE beats]])
if gate then return gate end
local most, e1 = int_arg(1, 1, DQ_CALL_MAX, 'workers')
if not most then return e1 end
local per, e2 = int_arg(2, 0, 100, 'tasks per worker')
if not per then return e2 end
local look, e3 = int_arg(3, 0, DQ_STEP_MAX, 'in flight to look at')
if not look then return e3 end
local cfg = config()
local now = now_ms()

local beats = redis.call('ZREVRANGE', K_BEATS, 0, DQ_STEP_MAX - 1, 'WITHSCORES')
local names = {}
for i = 1, #beats, 2 do
  names[#names + 1] = beats[i]
end
local recs = {}
if #names > 0 then recs = redis.call('HMGET', K_WORKERS, unpack(names)) end
local list, live, lost = {}, 0, 0
for i, n in ipairs(names) do
  local w = worker_decode(recs[i]) or {host = '', pid = 0, version = '', started = 0, beat = 0,
    conc = 0, busy = 0, done = 0, retried = 0, failed = 0, command = '', draining = false,
    hung = 0}
  w.name, w.last = n, tonumber(beats[2 * i])
  local after = cfg.worker_lost_ms
  if after == 0 then after = 3 * (w.beat > 0 and w.beat or 30000) end
  w.lost = now - w.last > after
  if w.lost then lost = lost + 1 else live = live + 1 end
  w.tasks, w.held = {}, 0
  list[#list + 1] = w
end
table.sort(list, function(a, b) return a.name < b.name end)
local by_name = {}
for i = 1, math.min(most, #list) do
  by_name[list[i].name] = list[i]
end

local looked = 0
if look > 0 and #list > 0 then
  local keys = redis.call('ZRANGE', K_INFLIGHT, 0, look - 1)
  looked = #keys
  if #keys > 0 then
    local runs = redis.call('HMGET', K_RUNNING, unpack(keys))
    for i, tk in ipairs(keys) do
      local run = runs[i] and run_decode(runs[i])
      local w = run and by_name[run.worker]
      if w then
        w.held = w.held + 1
        if #w.tasks < 2 * per then
          w.tasks[#w.tasks + 1] = tkey_id(tk)
          w.tasks[#w.tasks + 1] = run.claimed
        end
      end
    end
  end
end

local out = {now, redis.call('ZCARD', K_BEATS), live, lost, redis.call('ZCARD', K_INFLIGHT),
  looked, cfg.worker_lost_ms, math.min(most, #list)}
for i = 1, math.min(most, #list) do
  local w = list[i]
  local row = {w.name, w.host, w.pid, w.version, w.started, w.beat, w.last, w.lost and 1 or 0,
    w.conc, w.busy, w.done, w.retried, w.failed, w.command, w.draining and 1 or 0, w.hung,
    w.held,
    #w.tasks / 2}
  for _, v in ipairs(row) do
    out[#out + 1] = v
  end
  for _, v in ipairs(w.tasks) do
    out[#out + 1] = v
  end
end
return out
