-- requeue: moves failed tasks back to scheduled (operator action), with attempt reset
-- to 0 and the deadline cleared, due after a delay. Recorded in the audit log.
-- KEYS: the eleven queue keys (see lib.lua); writes failed, failidx, sched, ids, stats,
--   audit.
-- ARGV: [1] mode 'ids' or 'all', [2] delay ms (>= 0), [3] who, then
--   ids: [4..] 1..1000 task ids. All or nothing: if any id is not in the failed set
--     (someone requeued or dropped it first) or is undecodable, nothing moves.
--   all: [4] until ms ('' on the first call: now; failures of that very millisecond
--     that come after the first step are in scope too),
--     [5] spread ms (>= 0), [6] total ('' on the first call), [7] done so far,
--     [8] skipped so far, [9] cursor task key ('' first), [10] cursor failed ms.
--     Looks at up to 1000 failures with failed time <= until, oldest first, from the
--     cursor (the last one looked at: resumed after its rank, or, if it is gone, at the
--     first failure of its millisecond, so nothing is skipped); undecodable ones cannot
--     run and stay failed. The k-th of total is due at now + delay + spread * k / total,
--     so a fixed bug does not come back as a stampede.
--     Optional, a filter (docs/PROTOCOL.md 4.6): [11] '' (every failure), 'group',
--     'match' or 'key', [12] the group (its id or signature), the text (1..200 bytes;
--     matched as search.lua matches) or the task key (1..64 bytes: the envelope's "k",
--     PROTOCOL.md 4.10), [13] step: failures looked at per call (1..1000, default
--     1000); a filtered step also stops once it has used 2 ms of Redis time
--     (BULK_BUDGET_US), and the next resumes at its cursor. A group is walked in its own ZSET (only its tasks are looked at); a match
--     or a key walks the failed set and moves the failures that contain the text or
--     whose envelope has the key, spread by their position in it. A filtered requeue writes one audit entry, on its last step; a
--     group that does not exist on the first call is DQ_ENOTFOUND.
--     [14] audit (a partitioned queue's walk, PROTOCOL.md 14): '' as above, 'off' (a
--     partition 1..: no entry), or '+D,T,S' (partition 0, walked last: one entry, on the
--     last step, with D moved, T in scope and S skipped of the other partitions added);
--     with either a group missing here is not an error, just nothing to move.
--   now: [4] id, [5] its envelope bytes (for a generated id; '' for a caller-chosen
--     one): a scheduled task becomes due now ("run now"); attempts are kept.
-- Reply: ids: {moved}. all: {moved, until, total, done, skipped, finished (0|1),
--   cursor task key, cursor failed ms}. now: {1}.
-- Errors: DQ_ENOTFOUND naming the missing ids; DQ_EINVAL for bad arguments or
--   undecodable ids.
-- Complexity: O(k log N) for k ids, or k <= step per 'all' step.
local gate = operator_gate('requeue', [[EXISTS group HDEL failed groups HEXISTS failed groups
  running HGET failed ids HINCRBY stats HMGET config HSET ids PUBLISH wake TIME XADD audit ZADD
  sched ZCOUNT failidx group sched ZRANGE failidx group sched ZRANK failidx group ZREM failidx group
  ZSCORE group sched
  HINCRBY roll PEXPIREAT roll]])
if gate then return gate end
local cfg = config()
local now = now_ms()
local mode, delay, who = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if not delay or delay < 0 or delay > cfg.max_delay_ms or delay ~= math.floor(delay) then
  return err('DQ_EINVAL', 'delay: %q ms is not in 0..%s (max_delay_ms)', ARGV[2],
    dec(cfg.max_delay_ms))
end

-- @grouped: the caller takes the task out of its group (a group step, for all at once).
-- @e: the envelope already decoded from rec.raw (or nil); @quiet: the caller publishes
-- the wake-up once for many (a bulk step).
local function requeue_one(tk, rec, due, grouped, e, quiet)
  e = e or env_decode(rec.raw)
  e.attempt = 0
  e.deadline = nil
  hist_requeued(e, rec)
  schedule(e, due, quiet)
  if not grouped then group_remove(tk, rec) end
  redis.call('HDEL', K_FAILED, tk)
  redis.call('ZREM', K_FAILIDX, tk)
end

if mode == 'ids' then
  local n = #ARGV - 3
  if n < 1 or n > DQ_CALL_MAX then
    return err('DQ_EINVAL', 'ids: %d given; 1..%d per call', n, DQ_CALL_MAX)
  end
  local missing, bad, found, seen = {}, {}, {}, {}
  for i = 4, #ARGV do
    local dup = seen[ARGV[i]]
    seen[ARGV[i]] = true
    local tk = not dup and resolve(K_FAILED, ARGV[i])
    local rec = tk and fail_decode(redis.call('HGET', K_FAILED, tk))
    if dup then
      -- named twice in one call: moved once
    elseif not tk then
      missing[#missing + 1] = ARGV[i]
    elseif not rec or rec.undecodable or not env_decode(rec.raw) then
      bad[#bad + 1] = ARGV[i]
    else
      found[#found + 1] = {tk, rec}
    end
  end
  local detail = id_list(ARGV, 4) .. (delay > 0 and (' delay=' .. dec(delay) .. 'ms') or '')
  if #missing > 0 then
    audit(cfg, who, 'requeue', detail, 'refused: not found: ' .. id_list(missing, 1))
    return err('DQ_ENOTFOUND', 'not in the failed set: %s', id_list(missing, 1))
  end
  if #bad > 0 then
    audit(cfg, who, 'requeue', detail, 'refused: undecodable: ' .. id_list(bad, 1))
    return err('DQ_EINVAL', 'undecodable, can only be dropped: %s', id_list(bad, 1))
  end
  for _, f in ipairs(found) do
    requeue_one(f[1], f[2], now + delay)
  end
  redis.call('HINCRBY', K_STATS, 'requeued', #found)
  roll.add('q', #found) -- history (PROTOCOL.md 13)
  roll.flush(cfg.history_minutes, now)
  audit(cfg, who, 'requeue', detail, 'ok: ' .. #found .. ' moved')
  return {#found}
elseif mode == 'all' then
  local t0 = clock_us() -- the step's budget counts from here
  local until_ms = tonumber(ARGV[4]) or now
  local spread = tonumber(ARGV[5]) or 0
  if spread < 0 or spread > cfg.max_delay_ms then
    return err('DQ_EINVAL', 'spread: %q ms is not in 0..%s (max_delay_ms)', ARGV[5],
      dec(cfg.max_delay_ms))
  end
  local kind, value = ARGV[11] or '', ARGV[12] or ''
  local step = tonumber(ARGV[13] or DQ_STEP_MAX)
  if not step or step < 1 or step > DQ_STEP_MAX or step ~= math.floor(step) then
    return err('DQ_EINVAL', 'step: %q is not in 1..%d', tostring(ARGV[13]), DQ_STEP_MAX)
  end
  local z, gid, bad, au = filter_set(kind, value, ARGV[14] or '')
  if bad then return bad end
  local done, skipped = tonumber(ARGV[7]) or 0, tonumber(ARGV[8]) or 0
  local last, last_ms = ARGV[9] or '', tonumber(ARGV[10]) or 0
  local detail = string.format('failed until %s%s; delay=%sms spread=%sms', dec(until_ms),
    filter_text(kind, value), dec(delay), dec(spread))
  if au.mode == 'sum' then detail = detail .. '; every partition' end
  if not z then
    if ARGV[6] == '' and au.mode == '' then
      return err('DQ_ENOTFOUND', 'group: no group %q', value)
    end
    -- the group emptied (this requeue moved its last tasks, or someone else did)
    local total = tonumber(ARGV[6]) or 0
    if au.mode ~= 'off' then
      audit(cfg, who, 'requeue-all', detail, string.format('ok: %d moved (of %d in scope), %d ' ..
        'undecodable skipped, finished', done + au[1], total + au[2], skipped + au[3]))
    end
    return {0, until_ms, total, done, skipped, 1, last, last_ms}
  end
  local total = tonumber(ARGV[6]) or redis.call('ZCOUNT', z, '-inf', dec(until_ms))
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
  local finished = #page < 2 * step
  local moved, gone, looked = 0, {}, 0
  local first, earliest = next_due(), nil -- one wake-up for the step, as claim does
  for i = 1, #page, 2 do
    local tk, ms = page[i], tonumber(page[i + 1])
    if ms > until_ms then
      finished = true
      break
    end
    if kind ~= '' and over_budget(t0, looked) then
      finished = false
      break
    end
    looked = looked + 1
    last, last_ms = tk, ms
    local raw = redis.call('HGET', K_FAILED, tk)
    if filter_hit(kind, tk, raw, value) then
      local rec = raw and fail_decode(raw)
      local e = rec and not rec.undecodable and env_decode(rec.raw)
      if not e then
        skipped = skipped + 1
      else
        local k = done + moved
        if kind == 'match' or kind == 'key' then
          k = start + looked - 1 + done -- by position in the set
        end
        local due = now + delay
        if total > 0 then due = due + math.floor(spread * math.min(k, total) / total) end
        requeue_one(tk, rec, due, gid ~= nil, e, true)
        if not earliest or due < earliest then earliest = due end
        gone[#gone + 1] = tk
        moved = moved + 1
      end
    end
  end
  if gid then group_forget(gid, gone) end
  if earliest and (first < 0 or earliest < first) then
    wake(dec(earliest))
  end
  finished = finished and 1 or 0
  if moved > 0 then redis.call('HINCRBY', K_STATS, 'requeued', moved) end
  roll.add('q', moved) -- history (PROTOCOL.md 13)
  roll.flush(cfg.history_minutes, now)
  if au.mode == 'off' then
    -- a partition 1..: partition 0's last step writes the queue's one entry
  elseif (kind ~= '' or au.mode == 'sum') and finished == 1 then
    audit(cfg, who, 'requeue-all', detail, string.format('ok: %d moved (of %d in scope), %d ' ..
      'undecodable skipped, finished', done + moved + au[1], total + au[2], skipped + au[3]))
  elseif kind == '' and (moved > 0 or finished == 1) then
    audit(cfg, who, 'requeue-all', detail,
      string.format('ok: %d moved (%d of %d so far, %d undecodable skipped)%s', moved,
        done + moved, total, skipped, finished == 1 and ', finished' or ''))
  end
  return {moved, until_ms, total, done + moved, skipped, finished, last, last_ms}
elseif mode == 'now' then
  local id, m = ARGV[4] or '', ARGV[5] or ''
  local found
  local due, seq = ids_get(id)
  if due then
    found = member_at(due, seq)
  elseif m ~= '' and redis.call('ZSCORE', K_SCHED, m) then
    local em = env_decode(m)
    if em and not em.id and dec(em.seq) == id then found = m end
  end
  local e = found and env_decode(found)
  if not e then
    audit(cfg, who, 'run-now', id, 'refused: not scheduled')
    return err('DQ_ENOTFOUND', 'not in the scheduled set: %s', id)
  end
  schedule(e, now) -- same member, new score: it is due now
  audit(cfg, who, 'run-now', id, 'ok')
  return {1}
end
return err('DQ_EINVAL', 'mode: %q is not ids, all or now', mode)
