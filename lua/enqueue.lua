-- enqueue: schedules one or more tasks whose envelopes the producer built.
-- KEYS: the eleven queue keys (see lib.lua); writes sched, ids, seq, stats.
-- ARGV: [1] n, the number of tasks (1..1000); then 3 arguments per task:
--   envelope template: a complete v1 envelope (docs/PROTOCOL.md 4.1) with attempt 0,
--     seq and enqueued written as cf + 8 zero bytes, max attempts nil for the queue's
--     default, deadline nil or cf + 8 bytes of ms after the due time, last error nil;
--   time: 'd' .. delay ms, or 'a' .. epoch ms (a past time means now); 'D' or 'A' the
--     same with replace: a scheduled task with this id (required) gets this envelope and
--     due time, keeping its seq (debounce: each call pushes the due time);
--   id: '' for a generated id, else the id the template carries.
-- The script fills in what only the server knows: seq (one INCRBY for the call),
--   enqueued (one TIME), the default max attempts and time limit (one HMGET; the time
--   limit only into a v1 template, which then becomes v2) and the deadline (due +
--   the template's ms); it checks what needs server state (max_payload, max_delay_ms)
--   and what guards the queue's own invariants (the template's layout, the id's form).
-- Reply: array of 3 per task: id, status (0 added, 1 duplicate scheduled,
--   2 duplicate in flight, 3 duplicate failed, 4 duplicate of a task done within its
--   unique-for window, 5 replaced), due ms (-1 if unknown; for 4 the ms left in the window).
--   A task to replace that is in flight or failed gets 2 or 3: nothing changes.
-- Errors: DQ_EINVAL naming the field, the value and the limit; nothing is added when
--   any task is invalid. With n > 1 the message starts with 'task K: ' (K = 1..n, the
--   task's place in this call).
-- Complexity: O(n log N) for N scheduled tasks: one variadic ZADD; a caller-chosen id
--   that is not a duplicate otherwise costs one ZSCORE of the unique-for windows (uniq),
--   a replaced one O(log^2 N) to find its member.
local n = tonumber(ARGV[1])
if not n or n < 1 or n > DQ_CALL_MAX or n ~= math.floor(n) or #ARGV ~= 1 + 3 * n then
  return err('DQ_EINVAL', 'enqueue: %s tasks with %d arguments; expected 1..%d tasks of 3',
    tostring(ARGV[1]), #ARGV - 1, DQ_CALL_MAX)
end
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = producer_gate('enqueue', [[HEXISTS failed running HGET ids HINCRBY stats HMGET config
  HSET ids INCRBY seq PUBLISH wake TIME ZADD sched ZCOUNT sched ZRANGE sched ZREM sched ZSCORE
  uniq
  HINCRBY roll PEXPIREAT roll]])
if gate then return gate end
local cfg = config_of({'max_delay_ms', 'max_payload', 'max_attempts', 'time_limit_ms',
  'history_minutes'})
local now = now_ms()

local tasks = {}
local where = ''
for i = 0, n - 1 do
  if n > 1 then where = 'task ' .. (i + 1) .. ': ' end
  local a = 2 + 3 * i
  local m, spec, id = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  local tv = tonumber(string.sub(spec, 2))
  local mode = string.byte(spec, 1)
  local replace = mode == 68 or mode == 65 -- 'D', 'A': replace
  if replace then mode = mode + 32 end
  if not tv or tv ~= math.floor(tv) or (mode ~= 100 and mode ~= 97) then -- 'd', 'a'
    return err('DQ_EINVAL', where .. 'time: %q is not d<ms>, a<ms>, D<ms> or A<ms>', spec)
  end
  if replace and id == '' then
    return err('DQ_EINVAL', where .. 'replace: needs a caller-chosen id')
  end
  local due = now + tv
  if mode == 97 then due = tv end
  if due < now then due = now end
  if due - now > cfg.max_delay_ms then
    return err('DQ_EINVAL', where .. 'delay: %s ms is over the limit of %s ms (max_delay_ms)',
      dec(due - now), dec(cfg.max_delay_ms))
  end
  if id ~= '' and (#id > DQ_ID_MAX or string.find(id, '[%z\1-\31\127]') or
      string.match(id, '^%d+$')) then
    return err('DQ_EINVAL', where ..
      'id: %q must be 1..%d bytes without control characters, not all digits', id, DQ_ID_MAX)
  end
  local t, why = env_template(m, id)
  if not t then
    return err('DQ_EINVAL', where .. 'envelope: %s', why)
  end
  if t.payload_len > cfg.max_payload then
    return err('DQ_EINVAL', where ..
      'payload: %d bytes is over the limit of %d bytes (max_payload)', t.payload_len,
      cfg.max_payload)
  end
  t.due, t.id, t.replace = due, (id ~= '' and id or nil), replace
  tasks[i + 1] = t
end

-- Duplicates: of tasks that exist, and of an earlier task of this call.
local added, replaced, seen = 0, 0, {}
for _, t in ipairs(tasks) do
  t.status = 0
  if t.id then
    local d, oseq
    if not seen[t.id] then d, oseq = ids_get(t.id) end
    local m = d and t.replace and member_at(d, oseq)
    if seen[t.id] then
      t.status, t.due = 1, seen[t.id]
    elseif m then
      -- replace: the old member goes; a history it has stays the task's (as a requeue
      -- keeps it), so the new one carries the mark that deletes it at the end
      redis.call('ZREM', K_SCHED, m)
      t.status, t.seq = 5, oseq
      if hist_marked(m, 1) then
        local o = env_decode(m)
        t.mark = (o and o.last_error) or 'replaced'
      end
      seen[t.id] = t.due
    elseif d then
      t.status, t.due = 1, d
    elseif redis.call('HEXISTS', K_RUNNING, 'c:' .. t.id) == 1 then
      t.status, t.due = 2, -1
    elseif redis.call('HEXISTS', K_FAILED, 'c:' .. t.id) == 1 then
      t.status, t.due = 3, -1
    else
      local w = tonumber(redis.call('ZSCORE', K_UNIQ, t.id))
      if w and w > now then
        t.status, t.due = 4, w - now
      else
        seen[t.id] = t.due
      end
    end
  end
  if t.status == 0 then added = added + 1 end
  if t.status == 5 then replaced = replaced + 1 end
end

local out = {}
if added + replaced > 0 then
  local seq = added > 0 and redis.call('INCRBY', K_SEQ, added) - added
  local first = next_due()
  local earliest = -1
  local z, ids = {}, {}
  local now8, default_max = p_u64(now), p_uint(cfg.max_attempts)
  -- the queue's default time limit goes to tasks without one of their own (v1 templates)
  local default_ext = cfg.time_limit_ms > 0 and '\129\162tl' .. p_uint(cfg.time_limit_ms) or nil
  -- destination first: the counter, then the members, then the index
  if added > 0 then redis.call('HINCRBY', K_STATS, 'enqueued', added) end
  if replaced > 0 then redis.call('HINCRBY', K_STATS, 'replaced', replaced) end
  for _, t in ipairs(tasks) do
    if t.status == 0 or t.status == 5 then
      if t.status == 0 then
        seq = seq + 1
        t.seq = seq
      end
      z[#z + 1] = dec(t.due)
      local mb = env_fill(t, t.seq, now8, default_max, default_ext)
      local e = t.mark and env_decode(mb)
      if e then
        e.last_error = t.mark
        mb = env_encode(e)
      end
      z[#z + 1] = mb
      if t.id then
        ids[#ids + 1] = t.id
        ids[#ids + 1] = dec(t.due) .. ':' .. dec(t.seq)
      end
      if earliest < 0 or t.due < earliest then earliest = t.due end
    end
  end
  redis.call('ZADD', K_SCHED, unpack(z))
  if #ids > 0 then redis.call('HSET', K_IDS, unpack(ids)) end
  if first < 0 or earliest < first then
    wake(dec(earliest))
  end
  roll.add('e', added) -- history (PROTOCOL.md 13)
  roll.flush(cfg.history_minutes, now)
end
for _, t in ipairs(tasks) do
  out[#out + 1] = t.id or dec(t.seq)
  out[#out + 1] = t.status
  out[#out + 1] = t.due
end
return out
