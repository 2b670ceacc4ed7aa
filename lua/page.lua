-- page: one page of a view of the queue, for listings and the inspector.
-- KEYS: the eleven queue keys (see lib.lua); read only.
-- ARGV: [1] view: 'due' | 'future' | 'inflight' | 'failed' | 'done' | 'parked', [2] offset
--   (>= 0), [3] limit (1..1000), optional [4] group (its id or signature; view failed only):
--   the page is of that group's failures (docs/PROTOCOL.md 4.6); no such group: total 0.
-- Reply: {now, total in the view, then per item 3 fields}:
--   due, future: envelope bytes, due ms, '' (ordered by due time, ties in enqueue order);
--   inflight: task key, lease deadline ms, running record (or '' if missing);
--   failed: task key, failed ms, failure record (or '' if missing), newest first;
--   done: task key, done ms, done record (or '' if missing), newest first (the tasks
--   kept by done retention, PROTOCOL.md 4.7; none done longer than done_retention_ms ago);
--   parked: envelope bytes, due ms, its key (per-key limits, PROTOCOL.md 4.10: due tasks
--   held back in kq:<key>), key by key in kpark's order (fewest parked first, ties by key
--   bytes), each key's in due order; the total is the parked gauge of stats.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(log N + limit); parked: O(K + limit log N), K the keys before the page's
--   end (kpark read 1000 keys a command).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('page', [[HEXISTS groups HGET stats HMGET config done failed running TIME
  ZCARD doneidx failidx group inflight sched ZCOUNT doneidx sched ZRANGE kpark kq sched]])
if gate then return gate end
local now = now_ms()
local view, offset, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if ARGV[4] and view ~= 'failed' then
  return err('DQ_EINVAL', 'group: only the failed view has groups, not %q', view)
end
if not offset or offset < 0 or offset ~= math.floor(offset) then
  return err('DQ_EINVAL', 'offset: %q is not a whole number >= 0', ARGV[2])
end
if not limit or limit < 1 or limit > DQ_CALL_MAX or limit ~= math.floor(limit) then
  return err('DQ_EINVAL', 'limit: %q is not in 1..%d', ARGV[3], DQ_CALL_MAX)
end
local out = {now, 0}
local function add_scored(items, data)
  for i = 1, #items, 2 do
    out[#out + 1] = items[i]
    out[#out + 1] = tonumber(items[i + 1])
    out[#out + 1] = data and (data[(i + 1) / 2] or '') or ''
  end
end
if view == 'due' or view == 'future' then
  -- by rank, not ZRANGEBYSCORE ... LIMIT offset, which walks the offset one by one: a
  -- deep page (delayq export pages through millions) costs O(log N + limit)
  local due = redis.call('ZCOUNT', K_SCHED, '-inf', dec(now))
  local base, total = 0, due
  if view == 'future' then base, total = due, redis.call('ZCARD', K_SCHED) - due end
  out[2] = total
  if offset < total then
    local last = base + math.min(offset + limit, total) - 1
    add_scored(redis.call('ZRANGE', K_SCHED, base + offset, last, 'WITHSCORES'))
  end
elseif view == 'inflight' or view == 'failed' or view == 'done' then
  local z, h, cmd = K_INFLIGHT, K_RUNNING, 'ZRANGE'
  if view == 'failed' then z, h, cmd = K_FAILIDX, K_FAILED, 'ZREVRANGE' end
  if view == 'done' then z, h, cmd = K_DONEIDX, K_DONE, 'ZREVRANGE' end
  if ARGV[4] then
    -- a group that does not exist is an empty page ('other!' is no group's key)
    z = K_GROUP .. (group_find(ARGV[4]) or (GROUP_OTHER .. '!'))
  end
  local total = redis.call('ZCARD', z)
  if view == 'done' then
    -- done_retention_ms (PROTOCOL.md 4.7): a record past its age is not shown, though
    -- only the next write that keeps done tasks removes it. The aged are the oldest, the
    -- end of this newest-first view, so the page stays by rank
    local age = config_of({'done_retention_ms'}).done_retention_ms
    if age > 0 then
      total = total - redis.call('ZCOUNT', K_DONEIDX, '-inf', '(' .. dec(now - age))
    end
  end
  out[2] = total
  local items = {}
  if offset < total then
    items = redis.call(cmd, z, offset, math.min(offset + limit, total) - 1, 'WITHSCORES')
  end
  local data = {}
  if #items > 0 then
    local tks = {}
    for i = 1, #items, 2 do tks[#tks + 1] = items[i] end
    data = redis.call('HMGET', h, unpack(tks))
    for i = 1, #tks do data[i] = data[i] or '' end
  end
  add_scored(items, data)
elseif view == 'parked' then
  out[2] = math.max(0, tonumber(redis.call('HGET', K_STATS, 'parked')) or 0)
  -- kpark's score is its key's ZCARD of kq: the keys before the offset are skipped whole
  local skip, r, want = offset, 0, limit
  while want > 0 do
    local ks = redis.call('ZRANGE', K_KPARK, r, r + DQ_STEP_MAX - 1, 'WITHSCORES')
    for i = 1, #ks, 2 do
      local n = tonumber(ks[i + 1]) or 0
      if skip >= n then
        skip = skip - n
      elseif want > 0 then
        local items = redis.call('ZRANGE', K_KQ .. ks[i], skip, skip + want - 1, 'WITHSCORES')
        skip, want = 0, want - #items / 2
        for j = 1, #items, 2 do
          out[#out + 1] = items[j]
          out[#out + 1] = tonumber(items[j + 1])
          out[#out + 1] = ks[i]
        end
      end
    end
    if #ks < 2 * DQ_STEP_MAX then break end
    r = r + DQ_STEP_MAX
  end
else
  return err('DQ_EINVAL', 'view: %q is not due, future, inflight, failed, done or parked', view)
end
return out
