-- find: locates one task by id, for show and drop.
-- KEYS: the eleven queue keys (see lib.lua); read only.
-- ARGV: [1] id, [2] scan cursor score ('' to start), [3] scan cursor skip.
-- In flight, failed and caller-chosen ids are found through their hashes. A generated
-- id of a scheduled task has no index (that would cost memory on every task), so the
-- scheduled set is walked: each call looks at up to 1000 members from the cursor and
-- returns a new cursor when it has not found the task yet.
-- Reply: {'inflight', task key, lease deadline, running record}
--      | {'failed', task key, failed ms, failure record}
--      | {'scheduled', envelope bytes, due ms}
--      | {'more', cursor score, cursor skip}
--      | {'none'}
-- Complexity: O(log N) by hash; O(log N + 1000) per scan step.
local id = ARGV[1]
local tk = resolve(K_RUNNING, id)
if tk then
  return {'inflight', tk, tonumber(redis.call('ZSCORE', K_INFLIGHT, tk)) or -1,
    redis.call('HGET', K_RUNNING, tk)}
end
tk = resolve(K_FAILED, id)
if tk then
  return {'failed', tk, tonumber(redis.call('ZSCORE', K_FAILIDX, tk)) or -1,
    redis.call('HGET', K_FAILED, tk)}
end
local due = redis.call('HGET', K_IDS, id)
if due then
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', K_SCHED, due, due)) do
    local e = env_decode(m)
    if e and e.id == id then return {'scheduled', m, tonumber(due)} end
  end
end
if not string.match(id, '^%d+$') or #id > 15 then return {'none'} end
local prefix = '\153\001' .. p_u64(tonumber(id)) .. '\192'
local from, skip = ARGV[2], tonumber(ARGV[3]) or 0
if from == '' then from = '-inf' end
local items = redis.call('ZRANGEBYSCORE', K_SCHED, from, '+inf', 'WITHSCORES', 'LIMIT', skip,
  1000)
for i = 1, #items, 2 do
  if string.sub(items[i], 1, #prefix) == prefix then
    return {'scheduled', items[i], tonumber(items[i + 1])}
  end
end
if #items < 2000 then return {'none'} end
local last = items[#items]
local same = 0
for i = #items, 2, -2 do
  if items[i] ~= last then break end
  same = same + 1
end
if last == from then same = same + skip end
return {'more', last, same}
