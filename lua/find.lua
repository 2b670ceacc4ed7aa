-- find: locates one task by id, for show and drop.
-- KEYS: the eleven queue keys (see lib.lua); read only.
-- ARGV: [1] id, [2] scan cursor: the last member looked at ('' to start), [3] its score.
-- In flight, failed, done and caller-chosen ids are found through their hashes. A generated
-- id of a scheduled task has no index (that would cost memory on every task), so the
-- scheduled set is walked: each call looks at up to 1000 members after the cursor (by
-- rank; if the cursor member is gone, from the first member of its score, so nothing
-- is skipped) and returns a new cursor when it has not found the task yet. The same walk
-- finds an undecodable member by the name listings and claim give it,
-- "undecodable:<sha1hex of the member>".
-- Reply: {'inflight', task key, lease deadline, running record, history}
--      | {'failed', task key, failed ms, failure record, history}
--      | {'scheduled', envelope bytes, due ms, history}
--      | {'done', task key, done ms, done record, unique until ms (-1: no open
--        unique-for window)} (done retention, PROTOCOL.md 4.7; on the first call only,
--        before the walk)
--      | {'more', cursor member, cursor score}
--      | {'none'} | {'none', unique until ms, now ms} (a caller-chosen id found nowhere
--        whose unique-for window is still open: enqueue refuses it until then)
--   history: an array of the task's attempt records, oldest first (empty for a task that
--   never failed; docs/PROTOCOL.md 4.5).
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(log N) by hash, O(log^2 N) by the id index; O(log N + 1000) per scan
--   step.
local id = ARGV[1]
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('find', [[HEXISTS failed running HGET done failed ids running HMGET
  config LRANGE hist TIME ZCOUNT sched ZRANGE sched ZRANK sched ZSCORE doneidx failidx inflight
  uniq]])
if gate then return gate end
local tk = resolve(K_RUNNING, id)
if tk then
  return {'inflight', tk, tonumber(redis.call('ZSCORE', K_INFLIGHT, tk)) or -1,
    redis.call('HGET', K_RUNNING, tk), hist_get(tk)}
end
tk = resolve(K_FAILED, id)
if tk then
  return {'failed', tk, tonumber(redis.call('ZSCORE', K_FAILIDX, tk)) or -1,
    redis.call('HGET', K_FAILED, tk), hist_get(tk)}
end
local due, seq = ids_get(id)
if due then
  local m = member_at(due, seq)
  if m then return {'scheduled', m, due, hist_get('c:' .. id)} end
end
-- kept by done retention (PROTOCOL.md 4.7): after scheduled, so a reused id shows the
-- task that is still to run; a generated id is never scheduled again once done
if ARGV[2] == '' then
  tk = string.match(id, '^%d+$') and id or 'c:' .. id
  local rec = redis.call('HGET', K_DONE, tk)
  local at = rec and (tonumber(redis.call('ZSCORE', K_DONEIDX, tk)) or -1)
  local now = rec and now_ms()
  if rec then
    -- one past done_retention_ms is gone to readers, though no write has removed it yet
    local age = config_of({'done_retention_ms'}).done_retention_ms
    if age > 0 and at < now - age then rec = nil end
  end
  if rec then
    -- and, for a caller-chosen id, until when enqueue refuses it (its open window)
    local w = tk ~= id and tonumber(redis.call('ZSCORE', K_UNIQ, id))
    return {'done', tk, at, rec, w and w > now and w or -1}
  end
end
-- an undecodable member, by the name claim would fail it under (undecodable:<sha1>)
local bad = string.match(id, '^undecodable:%x+$') and #id == 52
if not bad and (not string.match(id, '^%d+$') or #id > 15) then
  -- gone, but done within its unique-for window (uniq, PROTOCOL.md 4.1 "uf"): say until
  -- when enqueue refuses the id, so "not found" is not taken for "free to reuse"
  local w = tonumber(redis.call('ZSCORE', K_UNIQ, id))
  local now = w and now_ms()
  if w and w > now then return {'none', w, now} end
  return {'none'}
end
-- a generated id's member starts with its header, its seq and a nil id (v1 or v2)
local prefix = not bad and p_u64(tonumber(id)) .. '\192'
local last, last_score = ARGV[2], ARGV[3]
local start = 0
if last ~= '' then
  start = redis.call('ZRANK', K_SCHED, last)
  if start then
    start = start + 1
  else
    start = redis.call('ZCOUNT', K_SCHED, '-inf', '(' .. last_score)
  end
end
local items = redis.call('ZRANGE', K_SCHED, start, start + DQ_STEP_MAX - 1, 'WITHSCORES')
for i = 1, #items, 2 do
  local m = items[i]
  local head = string.sub(m, 1, 2)
  if prefix and (head == '\153\001' or head == '\154\002') and
     string.sub(m, 3, 2 + #prefix) == prefix then
    return {'scheduled', m, tonumber(items[i + 1]), hist_get(id)}
  elseif bad and not env_peek(m) and undecodable_key(m) == id then
    return {'scheduled', m, tonumber(items[i + 1]), {}}
  end
end
if #items < 2 * DQ_STEP_MAX then return {'none'} end
return {'more', items[#items - 1], items[#items]}
