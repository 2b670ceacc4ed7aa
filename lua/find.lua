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
-- A parked task (per-key limits, PROTOCOL.md 4.10: due, held back in kq:<key> because its
-- key was at key_concurrency) is found by walking the keys that have parked tasks (kpark,
-- by rank): a caller-chosen id by its ids entry (due and seq) with one ZCOUNT per key,
-- a generated id, once the scheduled set is walked, by the members of each key's kq. Its
-- cursor is the key and 'k' .. the rank in its kq to go on from.
-- Reply: {'inflight', task key, lease deadline, running record, history}
--      | {'failed', task key, failed ms, failure record, history}
--      | {'scheduled', envelope bytes, due ms, history}
--      | {'done', task key, done ms, done record, unique until ms (-1: no open
--        unique-for window)} (done retention, PROTOCOL.md 4.7; on the first call only,
--        before the walk)
--      | {'parked', envelope bytes, due ms, key, the key's tasks in flight,
--        key_concurrency, history}
--      | {'more', cursor member, cursor score} (parked walk: {'more', key, 'k' .. rank})
--      | {'none'} | {'none', unique until ms, now ms} (a caller-chosen id found nowhere
--        whose unique-for window is still open: enqueue refuses it until then)
--   history: an array of the task's attempt records, oldest first (empty for a task that
--   never failed; docs/PROTOCOL.md 4.5).
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(log N) by hash, O(log^2 N) by the id index; O(log N + 1000) per scan
--   step; a parked caller-chosen id O(log N) per key with parked tasks, 1000 keys a step.
local id = ARGV[1]
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('find', [[HEXISTS failed running HGET done failed ids kin running HMGET
  config LRANGE hist TIME ZCARD kpark ZCOUNT kq sched ZRANGE kpark kq sched ZRANK kpark sched
  ZSCORE doneidx failidx inflight uniq]])
if gate then return gate end
-- resuming the walk of the parked tasks (its cursor score is 'k' .. a rank)
local kq_walk = string.sub(ARGV[3], 1, 1) == 'k'

-- The parked task @m (due @due) of key @k, found in kq:<k>, with what holds it back.
local function parked(m, due, k, tk)
  return {'parked', m, due, k, tonumber(redis.call('HGET', K_KIN, k)) or 0,
    config_of({'key_concurrency'}).key_concurrency, hist_get(tk)}
end

-- The member of kq ZSET @z with score @due and seq @seq, or nil: member_at's binary
-- search (lib.lua) over a key's parked tasks (member_at itself reads sched only, so the
-- scripts that use it need no access to kq in their role gates).
local function kq_member_at(z, due, seq)
  local lo = redis.call('ZCOUNT', z, '-inf', '(' .. dec(due))
  local hi = lo + redis.call('ZCOUNT', z, dec(due), dec(due)) - 1
  local want = p_u64(seq)
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local m = redis.call('ZRANGE', z, mid, mid)[1]
    local s = string.sub(m, 3, 11)
    if s == want then return m end
    if s < want then lo = mid + 1 else hi = mid - 1 end
  end
  return nil
end

-- Walks the parked tasks: the keys of kpark by rank from key @from ('' the first), in
-- its kq from rank @at, looking at up to DQ_STEP_MAX members (@due and @seq given: keys,
-- one ZCOUNT each; @at 1 then means @from is done). Returns a find reply, or nil when
-- the walk ends without it (or @from drained meanwhile and its place is lost: a task
-- that moves during a walk can be missed, as in the scheduled set's).
local function parked_walk(from, at, due, seq, tk)
  local r, looked = 0, 0
  if from ~= '' then
    r = redis.call('ZRANK', K_KPARK, from)
    if not r then return nil end
  end
  local prefix = not due and '\154\002' .. p_u64(tonumber(tkey_id(tk))) .. '\192'
  if due and at > 0 then r, at = r + 1, 0 end
  while looked < DQ_STEP_MAX do
    local ks = redis.call('ZRANGE', K_KPARK, r, r + 99)
    if #ks == 0 then return nil end
    for _, k in ipairs(ks) do
      local z = K_KQ .. k
      if due then
        looked = looked + 1
        local m = redis.call('ZCOUNT', z, dec(due), dec(due)) > 0 and kq_member_at(z, due, seq)
        if m then return parked(m, due, k, tk) end
        if looked >= DQ_STEP_MAX then return {'more', k, 'k1'} end
      else
        local items = redis.call('ZRANGE', z, at, at + DQ_STEP_MAX - looked - 1, 'WITHSCORES')
        for i = 1, #items, 2 do
          if string.sub(items[i], 1, #prefix) == prefix then
            return parked(items[i], tonumber(items[i + 1]), k, tk)
          end
        end
        looked = looked + #items / 2
        if looked >= DQ_STEP_MAX then return {'more', k, 'k' .. (at + #items / 2)} end
        at = 0
      end
    end
    r = r + #ks
  end
  return nil
end
local from, from_at = kq_walk and ARGV[2] or '', tonumber(string.sub(ARGV[3], 2)) or 0
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
  -- an entry without its member in sched: parked, unless a foreign write left it
  local p = parked_walk(from, from_at, due, seq, 'c:' .. id)
  if p then return p end
end
-- kept by done retention (PROTOCOL.md 4.7): after scheduled, so a reused id shows the
-- task that is still to run; a generated id is never scheduled again once done
if ARGV[2] == '' and not kq_walk then
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
-- (a generated id is below 2^53: 16 digits at most, those of partitions 100.. among them)
if not bad and (not string.match(id, '^%d+$') or #id > 16 or tonumber(id) >= 9007199254740992) then
  -- gone, but done within its unique-for window (uniq, PROTOCOL.md 4.1 "uf"): say until
  -- when enqueue refuses the id, so "not found" is not taken for "free to reuse"
  local w = tonumber(redis.call('ZSCORE', K_UNIQ, id))
  local now = w and now_ms()
  if w and w > now then return {'none', w, now} end
  return {'none'}
end
if kq_walk then return parked_walk(from, from_at, nil, nil, id) or {'none'} end
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
if #items < 2 * DQ_STEP_MAX then
  -- the scheduled set is walked: then the parked tasks, from the first key, next call
  if not bad and redis.call('ZCARD', K_KPARK) > 0 then return {'more', '', 'k0'} end
  return {'none'}
end
return {'more', items[#items - 1], items[#items]}
