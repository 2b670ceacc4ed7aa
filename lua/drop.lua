-- drop: deletes tasks for good (operator action): failed tasks by id or all of them,
-- and scheduled tasks by id. An in-flight task cannot be dropped while it runs.
-- Recorded in the audit log.
-- KEYS: the eleven queue keys (see lib.lua); writes failed, failidx, sched, ids, stats,
--   audit.
-- ARGV: [1] mode 'ids' or 'all', [2] who, then
--   ids: [3..] pairs of (id, envelope bytes or ''), 1..1000 pairs. The envelope names a
--     scheduled task with a generated id (found with find.lua), an undecodable member
--     named "undecodable:<sha1hex of it>", or a parked task of any id (per-key limits,
--     PROTOCOL.md 4.10: in kq:<its key>, which its envelope names; find.lua finds it); a
--     failed task or a scheduled one with a caller-chosen id is found by id alone. A
--     parked task leaves kq with kpark and the parked gauge exact. All or nothing: if
--     any id is not found, nothing is dropped.
--   all: [3] until ms ('' on the first call: now).
--     Drops up to 1000 failures with failed time <= until, oldest first.
--     Optional, a filter (docs/PROTOCOL.md 4.6): [4] 'group', 'match' or 'key', [5] the
--     group (its id or signature), the text (1..200 bytes) or the task key (1..64 bytes,
--     the envelope's "k"), [6] dropped so far, [7] cursor
--     task key ('' first), [8] cursor failed ms, [9] step: failures looked at (1..1000).
--     Walks as requeue's filtered 'all' does (with its 2 ms budget per step); one audit entry, on the last step; a group
--     that does not exist on the first call is DQ_ENOTFOUND. Kind '' (a partitioned
--     queue's drop of every failure) walks the whole failed set, their histories go too.
--     [10] audit (a partitioned queue's walk, PROTOCOL.md 14): '' as above, 'off' (a
--     partition 1..: no entry) or '+D,0,0' (partition 0, walked last: its one entry adds
--     D dropped by the others); with either a group missing here is nothing to drop.
--   parked: [3] a task key (1..64 bytes), [4] dropped so far, [5] step (1..1000): drops
--     up to step of that key's parked tasks (per-key limits, PROTOCOL.md 4.10), earliest
--     first, with their ids entries and history; kpark and the parked gauge shrink by as
--     many. One audit entry on the last step (the one that finds fewer than step).
--     [6] audit, as 'all' takes it (a partitioned queue's walk): 'off' or '+D,0,0'.
-- Reply: ids: {dropped}. all: {dropped, until, finished (0|1)}, with a filter followed
--   by the cursor task key and the cursor failed ms. parked: {dropped, 0, finished}.
-- Errors: DQ_ENOTFOUND naming the missing ids; DQ_EINVAL for an in-flight id.
-- Complexity: O(k log N) for k ids (k <= 1000), or k <= step per bulk step.
-- Flags: allow-oom (runs at maxmemory: removes tasks; one audit entry, the stream capped at
--   audit_retention; docs/OPERATIONS.md).
local gate = operator_gate('drop', [[EXISTS group HDEL failed groups ids stats HEXISTS failed groups
  running HGET failed ids HINCRBY stats HMGET config LTRIM hist TIME XADD audit ZADD kpark ZCOUNT
  failidx group sched ZRANGE failidx group kq sched ZRANGEBYSCORE failidx ZRANK failidx group sched
  ZREM failidx group kpark kq sched ZSCORE group kq sched
  HINCRBY roll PEXPIREAT roll]])
if gate then return gate end
allow_oom()
local cfg = config()
local now = now_ms()
local mode, who = ARGV[1], ARGV[2]

if mode == 'ids' then
  local n = (#ARGV - 2) / 2
  if n < 1 or n > DQ_CALL_MAX or n ~= math.floor(n) then
    return err('DQ_EINVAL', 'ids: %d arguments; expected 1..%d (id, envelope) pairs',
      #ARGV - 2, DQ_CALL_MAX)
  end
  local missing, running, plan, names, seen = {}, {}, {}, {}, {}
  for i = 3, #ARGV, 2 do
    local id, m = ARGV[i], ARGV[i + 1]
    local tk = not seen[id] and resolve(K_FAILED, id)
    -- a parked task, by the envelope find returned: in its key's kq, and the id's own
    local pe = not seen[id] and not tk and m ~= '' and string.byte(m, 1) == 154 and
      env_decode(m)
    local pk = pe and pe.k and redis.call('ZSCORE', K_KQ .. pe.k, m) and pe.k
    if pk and (pe.id or dec(pe.seq)) ~= id then pk = nil end
    if seen[id] then
      -- named twice in one call: dropped once
    elseif tk then
      plan[#plan + 1] = {'failed', tk}
    elseif pk then
      plan[#plan + 1] = {'parked', m, pe.id, pk, pe.seq}
    else
      local due, seq = ids_get(id)
      if due then
        -- an index entry without its member (only a foreign write makes one) is dropped
        -- with it, so the id is not blocked for good
        plan[#plan + 1] = {'sched', member_at(due, seq) or false, id}
      elseif m ~= '' and redis.call('ZSCORE', K_SCHED, m) then
        -- the envelope must be the task the id names, not any member
        local em = env_decode(m)
        if em and not em.id and dec(em.seq) == id then plan[#plan + 1] = {'sched', m} end
        -- an undecodable member, named as listings and claim name it
        if not em and undecodable_key(m) == id then plan[#plan + 1] = {'sched', m} end
      end
      if #plan < #names + 1 then
        if resolve(K_RUNNING, id) then
          running[#running + 1] = id
        else
          missing[#missing + 1] = id
        end
        plan[#plan + 1] = false
      end
    end
    if not seen[id] then names[#names + 1] = id end
    seen[id] = true
  end
  local detail = id_list(names, 1)
  if #running > 0 then
    audit(cfg, who, 'drop', detail, 'refused: in flight: ' .. id_list(running, 1))
    return err('DQ_EINVAL', 'in flight, cannot be dropped while running: %s',
      id_list(running, 1))
  end
  if #missing > 0 then
    audit(cfg, who, 'drop', detail, 'refused: not found: ' .. id_list(missing, 1))
    return err('DQ_ENOTFOUND', 'not found (failed or scheduled): %s', id_list(missing, 1))
  end
  local dropped = 0
  for _, p in ipairs(plan) do
    if not p then
      -- unreachable: a missing id returned above
    elseif p[1] == 'failed' then
      group_remove(p[2], redis.call('HGET', K_FAILED, p[2]))
      dropped = dropped + redis.call('HDEL', K_FAILED, p[2])
      hist_forget(p[2])
      redis.call('ZREM', K_FAILIDX, p[2])
    elseif p[1] == 'parked' then
      local n = redis.call('ZREM', K_KQ .. p[4], p[2])
      dropped = dropped + n
      hist_dropped(p[2])
      if p[3] then
        -- the id's entry, if it still names this task (as drop --parked does)
        local _, seq = ids_get(p[3])
        if seq == p[5] then redis.call('HDEL', K_IDS, p[3]) end
      end
      -- the key's count and the gauge, as a settle's promotion lowers them
      if redis.call('ZADD', K_KPARK, 'INCR', -n, p[4]) + 0 <= 0 then
        redis.call('ZREM', K_KPARK, p[4])
      end
      redis.call('HINCRBY', K_STATS, 'parked', -n)
    else
      if p[2] then dropped = dropped + redis.call('ZREM', K_SCHED, p[2]) end
      hist_dropped(p[2])
      if p[3] then
        local n = redis.call('HDEL', K_IDS, p[3])
        if not p[2] then dropped = dropped + n end
      end
    end
  end
  redis.call('HINCRBY', K_STATS, 'dropped', dropped)
  roll.add('p', dropped) -- history (PROTOCOL.md 13)
  roll.flush(cfg.history_minutes, now)
  audit(cfg, who, 'drop', detail, 'ok: ' .. dropped .. ' dropped')
  return {dropped}
elseif mode == 'all' and ARGV[4] then
  local t0 = clock_us() -- the step's budget counts from here
  local until_ms = tonumber(ARGV[3]) or now
  local kind, value, done = ARGV[4], ARGV[5] or '', tonumber(ARGV[6]) or 0
  local last, last_ms, step = ARGV[7] or '', tonumber(ARGV[8]) or 0, tonumber(ARGV[9])
  if not step or step < 1 or step > DQ_STEP_MAX or step ~= math.floor(step) then
    return err('DQ_EINVAL', 'step: %q is not in 1..%d', tostring(ARGV[9]), DQ_STEP_MAX)
  end
  local z, gid, bad, au = filter_set(kind, value, ARGV[10] or '')
  if bad then return bad end
  local detail = 'failed until ' .. dec(until_ms) .. filter_text(kind, value) ..
    (au.mode == 'sum' and '; every partition' or '')
  if not z then
    if ARGV[3] == '' and au.mode == '' then
      return err('DQ_ENOTFOUND', 'group: no group %q', value)
    end
    if au.mode ~= 'off' then
      audit(cfg, who, 'drop-all', detail, string.format('ok: %d dropped, finished', done + au[1]))
    end
    return {0, until_ms, 1, last, last_ms}
  end
  local start = 0
  if last ~= '' then
    start = redis.call('ZRANK', z, last)
    if start then
      start = start + 1
    else
      start = redis.call('ZCOUNT', z, '-inf', '(' .. dec(last_ms))
    end
  end
  local page = redis.call('ZRANGE', z, start, start + step - 1, 'WITHSCORES')
  local finished, gone, looked = #page < 2 * step, {}, 0
  for i = 1, #page, 2 do
    local tk = page[i]
    if tonumber(page[i + 1]) > until_ms then
      finished = true
      break
    end
    if over_budget(t0, looked) then
      finished = false
      break
    end
    looked = looked + 1
    last, last_ms = tk, tonumber(page[i + 1])
    local raw = redis.call('HGET', K_FAILED, tk)
    if filter_hit(kind, tk, raw, value) then
      if not gid then group_remove(tk, raw) end
      redis.call('HDEL', K_FAILED, tk)
      redis.call('ZREM', K_FAILIDX, tk)
      gone[#gone + 1] = tk
    end
  end
  if gid then group_forget(gid, gone) end
  if kind == '' then hist_forget_keys(gone, 1, 1) end -- as the unfiltered drop below
  if #gone > 0 then redis.call('HINCRBY', K_STATS, 'dropped', #gone) end
  roll.add('p', #gone) -- history (PROTOCOL.md 13)
  roll.flush(cfg.history_minutes, now)
  if finished and au.mode ~= 'off' then
    audit(cfg, who, 'drop-all', detail,
      string.format('ok: %d dropped, finished', done + #gone + au[1]))
  end
  return {#gone, until_ms, finished and 1 or 0, last, last_ms}
elseif mode == 'parked' then
  local k, done, step = ARGV[3] or '', tonumber(ARGV[4]) or 0, tonumber(ARGV[5])
  if #k < 1 or #k > DQ_KEY_MAX then
    return err('DQ_EINVAL', 'key: %d bytes; 1..%d', #k, DQ_KEY_MAX)
  end
  if not step or step < 1 or step > DQ_STEP_MAX or step ~= math.floor(step) then
    return err('DQ_EINVAL', 'step: %q is not in 1..%d', tostring(ARGV[5]), DQ_STEP_MAX)
  end
  -- the audit argument as the filtered steps read it (kind '' names no set to check)
  local _, _, bad, au = filter_set('', '', ARGV[6] or '')
  if bad then return bad end
  local ms = redis.call('ZRANGE', K_KQ .. k, 0, step - 1)
  for _, m in ipairs(ms) do
    hist_dropped(m)
    local e = env_decode(m)
    if e and e.id then
      -- the id's entry, if it still names this task (parked, it is not in sched)
      local _, seq = ids_get(e.id)
      if seq == e.seq then redis.call('HDEL', K_IDS, e.id) end
    end
  end
  local n = #ms
  if n > 0 then
    redis.call('ZREM', K_KQ .. k, unpack(ms))
    -- the key's count and the gauge, as a settle's promotion lowers them
    if redis.call('ZADD', K_KPARK, 'INCR', -n, k) + 0 <= 0 then redis.call('ZREM', K_KPARK, k) end
    redis.call('HINCRBY', K_STATS, 'parked', -n)
    redis.call('HINCRBY', K_STATS, 'dropped', n)
    roll.add('p', n) -- history (PROTOCOL.md 13)
    roll.flush(cfg.history_minutes, now)
  end
  local finished = n < step and 1 or 0
  if finished == 1 and au.mode ~= 'off' then
    audit(cfg, who, 'drop-parked',
      'parked key=' .. k .. (au.mode == 'sum' and '; every partition' or ''),
      string.format('ok: %d dropped, finished', done + n + au[1]))
  end
  return {n, 0, finished}
elseif mode == 'all' then
  local until_ms = tonumber(ARGV[3]) or now
  local tks = redis.call('ZRANGEBYSCORE', K_FAILIDX, '-inf', dec(until_ms), 'LIMIT', 0,
    DQ_STEP_MAX)
  for _, tk in ipairs(tks) do
    group_remove(tk, redis.call('HGET', K_FAILED, tk))
    redis.call('HDEL', K_FAILED, tk)
    redis.call('ZREM', K_FAILIDX, tk)
  end
  hist_forget_keys(tks, 1, 1)
  local finished = #tks < DQ_STEP_MAX and 1 or 0
  if #tks > 0 then redis.call('HINCRBY', K_STATS, 'dropped', #tks) end
  roll.add('p', #tks) -- history (PROTOCOL.md 13)
  roll.flush(cfg.history_minutes, now)
  if #tks > 0 or finished == 1 then
    audit(cfg, who, 'drop-all', 'failed until ' .. dec(until_ms),
      string.format('ok: %d dropped%s', #tks, finished == 1 and ', finished' or ''))
  end
  return {#tks, until_ms, finished}
end
return err('DQ_EINVAL', 'mode: %q is not ids, all or parked', mode)
