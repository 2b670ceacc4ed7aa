-- enqueue: schedules one or more tasks.
-- KEYS: the eleven queue keys (see lib.lua); writes sched, ids, seq, stats.
-- ARGV: [1] n, the number of tasks (1..1000); then 6 arguments per task:
--   payload (bytes), mode ('d' = delay, 'a' = absolute time), time (ms: delay >= 0,
--   or epoch ms), id ('' = generate one; otherwise 1..200 bytes, no control bytes, not
--   all digits), max attempts ('' = queue default, 0 = unlimited), deadline (ms after
--   the due time, at most 10 years; '' or 0 = none).
-- Reply: array of 3 per task: id, status (0 added, 1 duplicate scheduled,
--   2 duplicate in flight, 3 duplicate failed), due ms (-1 if unknown).
-- Errors: DQ_EINVAL naming the field, the value and the limit; nothing is added when
--   any task is invalid. With n > 1 the message starts with 'task K: ' (K = 1..n, the
--   task's place in this call).
-- Complexity: O(n log N) for N scheduled tasks.
local cfg = config()
local now = now_ms()
local n = tonumber(ARGV[1])
if not n or n < 1 or n > DQ_CALL_MAX or n ~= math.floor(n) or #ARGV ~= 1 + 6 * n then
  return err('DQ_EINVAL', 'enqueue: %s tasks with %d arguments; expected 1..%d tasks of 6',
    tostring(ARGV[1]), #ARGV - 1, DQ_CALL_MAX)
end

local tasks = {}
local where = ''
for i = 0, n - 1 do
  if n > 1 then where = 'task ' .. (i + 1) .. ': ' end
  local a = 2 + 6 * i
  local payload, mode, tv, id = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3]
  local maxa, dl = ARGV[a + 4], ARGV[a + 5]
  if #payload > cfg.max_payload then
    return err('DQ_EINVAL', where ..
      'payload: %d bytes is over the limit of %d bytes (max_payload)', #payload, cfg.max_payload)
  end
  if not tv or tv ~= math.floor(tv) then
    return err('DQ_EINVAL', where .. 'time: %q is not an integer number of ms', ARGV[a + 2])
  end
  local due
  if mode == 'd' then
    if tv < 0 then return err('DQ_EINVAL', where .. 'delay: %s ms is negative', dec(tv)) end
    due = now + tv
  elseif mode == 'a' then
    if tv < 0 then return err('DQ_EINVAL', where .. 'at: %s ms is before the epoch', dec(tv)) end
    due = math.max(tv, now)
  else
    return err('DQ_EINVAL', where .. 'mode: %q is not d or a', mode)
  end
  if due - now > cfg.max_delay_ms then
    return err('DQ_EINVAL', where .. 'delay: %s ms is over the limit of %s ms (max_delay_ms)',
      dec(due - now), dec(cfg.max_delay_ms))
  end
  if #id > DQ_ID_MAX or string.find(id, '[%z\1-\31\127]') then
    return err('DQ_EINVAL', where .. 'id: must be 1..%d bytes without control characters',
      DQ_ID_MAX)
  end
  if string.match(id, '^%d+$') then
    return err('DQ_EINVAL', where ..
      'id: %q is all digits; those are the generated ids (add a prefix)', id)
  end
  local m = cfg.max_attempts
  if maxa ~= '' then
    m = tonumber(maxa)
    if not m or m < 0 or m > 1000000 or m ~= math.floor(m) then
      return err('DQ_EINVAL', where .. 'max_attempts: %q is not in 0..1000000 (0 = unlimited)',
        maxa)
    end
  end
  local deadline
  if dl ~= '' and dl ~= '0' then
    local d = tonumber(dl)
    if not d or d < 0 or d > 315360000000 or d ~= math.floor(d) then
      return err('DQ_EINVAL', where ..
        'deadline: %q is not a whole number of ms in 0..315360000000 (10 years)', dl)
    end
    deadline = due + d
  end
  tasks[#tasks + 1] = {payload = payload, id = (id ~= '' and id or nil), due = due,
    max = m, deadline = deadline}
end

-- Writes go destination-first everywhere (see lib.lua): here the counter is bumped by
-- the number of tasks first, and corrected for duplicates after.
redis.call('HINCRBY', K_STATS, 'enqueued', #tasks)
local out = {}
local added = 0
for _, t in ipairs(tasks) do
  local status, due = 0, t.due
  if t.id then
    local d = ids_get(t.id)
    if d then
      status, due = 1, d
    elseif redis.call('HEXISTS', K_RUNNING, 'c:' .. t.id) == 1 then
      status, due = 2, -1
    elseif redis.call('HEXISTS', K_FAILED, 'c:' .. t.id) == 1 then
      status, due = 3, -1
    end
  end
  local id = t.id
  if status == 0 then
    local seq = redis.call('INCR', K_SEQ)
    schedule({seq = seq, id = t.id, attempt = 0, enq = now, max = t.max,
      deadline = t.deadline, payload = t.payload}, t.due)
    added = added + 1
    if not id then id = dec(seq) end
  end
  out[#out + 1] = id
  out[#out + 1] = status
  out[#out + 1] = due
end
if added < #tasks then redis.call('HINCRBY', K_STATS, 'enqueued', added - #tasks) end
return out
