-- import: puts exported tasks (delayq export records, read by the client) into this
-- queue, keeping their ids, sequence numbers, attempts, times and failure fields. One
-- call is one chunk, all or nothing: every task is validated and looked up first, then
-- every task that is new is written.
-- KEYS: the eleven queue keys (see lib.lua); writes sched, ids, failed, failidx, seq
--   (raised to the highest imported seq, before any task is written), audit, and the
--   history key of each imported task that has one (hist:<task key>).
-- ARGV: [1] who, [2] requeue ('0' | '1': failed tasks go to scheduled, due now, attempt
--   0, no deadline, as requeue does), [3] n (1..1000), then n groups of 19:
--   kind ('s' scheduled | 'f' failed | 'u' undecodable failed entry), id ('' for a
--   generated id), seq, attempt, enqueued ms, max attempts, deadline ms ('' none),
--   payload, has a last error ('0' | '1'), last error, due ms (s), failed ms (f, u),
--   reason, error, trace, who failed it (f, u), raw bytes (u), extensions ('' none: a
--   v1 envelope; else the v2 extension map's bytes, tl, uf and any other key, kept as
--   given, PROTOCOL.md 4.1; s, f), h = attempts in its
--   history (0..5; 0 for u); then, after the n groups, the history entries of the tasks
--   in order, oldest first, 6 each: attempt (1..2^32-1), started ms, duration ms, worker,
--   outcome ('retry' | 'fail' | 'lease expired' | 'timed out' | 'expired'), error
--   (..1024 bytes). An imported task's history key is replaced by them.
-- Reply: n groups of 3, as enqueue's: id, status, due ms. Status 0 imported (due -1 when
--   it went to failed), 1 already scheduled, 2 already in flight, 3 already failed (an
--   id twice in one call: the second reports where the first went). Nothing is changed
--   for a task that is already there.
-- Errors: DQ_EINVAL 'task K: <field>: ...' naming the field and the limit, nothing
--   written. Counters are not touched (no task ran or failed); one audit entry.
-- Complexity: O(n log N).
local who, requeue, n = ARGV[1], ARGV[2] == '1', tonumber(ARGV[3])
local G, HG = 19, 6
if not n or n < 1 or n > DQ_CALL_MAX or n ~= math.floor(n) or #ARGV < 3 + G * n then
  return err('DQ_EINVAL', 'import: n: %q tasks with %d arguments; expected 1..%d tasks of %d',
    tostring(ARGV[3]), #ARGV, DQ_CALL_MAX, G)
end
local nhist = 0 -- history entries after the groups
for k = 1, n do
  local h = ARGV[3 + G * k]
  if not string.match(h, '^[0-5]$') then
    return err('DQ_EINVAL', 'task %d: history: %q attempts; 0..%d are kept', k, h,
      DQ_HISTORY_MAX)
  end
  nhist = nhist + tonumber(h)
end
if #ARGV ~= 3 + G * n + HG * nhist then
  return err('DQ_EINVAL', 'import: %d arguments; expected %d for %d tasks with %d history ' ..
    'entries', #ARGV, 3 + G * n + HG * nhist, n, nhist)
end
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = operator_gate('import', [[DEL hist HEXISTS failed groups ids running HGET
  groups HINCRBY roll stats HLEN groups HMGET config HSET failed groups ids INCRBY seq
  PEXPIREAT roll PUBLISH wake RPUSH hist TIME XADD audit ZADD failidx group sched ZCARD
  failidx ZRANGE sched ZSCORE sched]])
if gate then return gate end
local cfg = config_of({'max_payload', 'failed_retention', 'audit_retention', 'history_minutes'})
local U32, U53 = 4294967295, 9007199254740991
local TEXT_MAX = 200 -- reason and who: bytes

local bad
local function num(k, field, v, lo, hi)
  local x = tonumber(v)
  if not x or x ~= math.floor(x) or x < lo or x > hi or not string.match(v, '^%d+$') then
    bad = string.format('task %d: %s: %q is not a whole number in %s..%s', k, field, v, dec(lo),
      dec(hi))
    return nil
  end
  return x
end
local function len_ok(k, field, s, most, limit_name)
  if #s > most then
    bad = string.format('task %d: %s: %d bytes is over the limit of %d bytes%s', k, field, #s,
      most, limit_name and ' (' .. limit_name .. ')' or '')
    return false
  end
  return true
end

-- The @h history entries of task @k from ARGV[@at + 1] on, checked, as encoded records
-- (hist_encode, the history block's own encoder), or nil with bad set.
local function history(k, h, at)
  local recs = {}
  for j = 1, h do
    local b, f = at + HG * (j - 1), string.format('history[%d].', j)
    local att = num(k, f .. 'attempt', ARGV[b + 1], 1, U32)
    local st = att and num(k, f .. 'started_ms', ARGV[b + 2], 0, U53)
    local d = st and num(k, f .. 'duration_ms', ARGV[b + 3], 0, U53)
    if not d then return nil end
    local wk, oc, msg = ARGV[b + 4], ARGV[b + 5], ARGV[b + 6]
    if not DQ_HISTORY_OUTCOMES[oc] then
      bad = string.format('task %d: %soutcome: %q is not retry, fail, lease expired, timed ' ..
        'out or expired', k, f, oc)
      return nil
    end
    if not (len_ok(k, f .. 'worker', wk, TEXT_MAX) and
        len_ok(k, f .. 'error', msg, DQ_HISTORY_ERROR_MAX)) then
      return nil
    end
    recs[j] = hist_encode(att, st, wk, oc, d, msg)
  end
  return recs
end

local tasks, seen = {}, {}
local now = now_ms()
local new_failed, max_seq = 0, 0
local out = {}
local hat = 3 + G * n -- where the next task's history entries start
for k = 1, n do
  local a = 3 + G * (k - 1)
  local kind, id = ARGV[a + 1], ARGV[a + 2]
  local t = {kind = kind}
  if kind ~= 's' and kind ~= 'f' and kind ~= 'u' then
    return err('DQ_EINVAL', 'task %d: kind: %q is not s, f or u', k, kind)
  end
  local h = tonumber(ARGV[a + 19])
  if h > 0 then
    -- undecodable entries never have a history (hist_forget_keys skips them)
    if kind == 'u' then
      return err('DQ_EINVAL', 'task %d: history: an undecodable entry has none', k)
    end
    t.hist = history(k, h, hat)
    if not t.hist then return err('DQ_EINVAL', '%s', bad) end
    hat = hat + HG * h
  end
  if kind == 'u' then
    t.raw = ARGV[a + 17]
    if #t.raw == 0 then return err('DQ_EINVAL', 'task %d: raw: empty', k) end
    if not len_ok(k, 'raw', t.raw, cfg.max_payload + 65536, 'max_payload + 65536') then
      return err('DQ_EINVAL', '%s', bad)
    end
    t.tk = undecodable_key(t.raw)
  else
    if id ~= '' then
      if #id > DQ_ID_MAX or string.find(id, '[%z\1-\31\127]') or string.match(id, '^%d+$') then
        return err('DQ_EINVAL', 'task %d: id: %q must be 1..%d bytes, no control bytes, not ' ..
          'all digits', k, id, DQ_ID_MAX)
      end
    end
    local e = {id = id ~= '' and id or nil}
    e.seq = num(k, 'seq', ARGV[a + 3], 1, U53)
    e.attempt = e.seq and num(k, 'attempt', ARGV[a + 4], 0, DQ_ATTEMPTS_MAX)
    e.enq = e.attempt and num(k, 'enqueued_ms', ARGV[a + 5], 0, U53)
    e.max = e.enq and num(k, 'max_attempts', ARGV[a + 6], 0, DQ_ATTEMPTS_MAX)
    if not e.max then return err('DQ_EINVAL', '%s', bad) end
    if ARGV[a + 7] ~= '' then
      e.deadline = num(k, 'deadline_ms', ARGV[a + 7], 0, U53)
      if not e.deadline then return err('DQ_EINVAL', '%s', bad) end
    end
    e.payload = ARGV[a + 8]
    if not len_ok(k, 'payload', e.payload, cfg.max_payload, 'max_payload') then
      return err('DQ_EINVAL', '%s', bad)
    end
    if ARGV[a + 9] == '1' then
      e.last_error = ARGV[a + 10]
      if not len_ok(k, 'last_error', e.last_error, 512) then return err('DQ_EINVAL', '%s', bad) end
    end
    if ARGV[a + 18] ~= '' then
      -- the v2 extension map as exported (PROTOCOL.md 4.1), kept byte for byte; checked
      -- as every reader checks it, and a unique-for window needs a caller-chosen id
      e.ext = ARGV[a + 18]
      local back = env_decode(env_encode(e))
      if not back then
        return err('DQ_EINVAL', 'task %d: extensions: not a valid extension map ' ..
          '(PROTOCOL.md 4.1: keys in order, tl and uf 1..%d ms)', k, DQ_TIME_LIMIT_MAX)
      end
      if back.uf and not e.id then
        return err('DQ_EINVAL', 'task %d: unique_for_ms: needs a caller-chosen id', k)
      end
    end
    t.e, t.tk = e, tkey(e)
    if e.seq > max_seq then max_seq = e.seq end
  end
  if kind == 's' then
    t.due = num(k, 'due_ms', ARGV[a + 11], 0, U53)
    if not t.due then return err('DQ_EINVAL', '%s', bad) end
  else
    t.at = num(k, 'failed_ms', ARGV[a + 12], 0, U53)
    if not t.at then return err('DQ_EINVAL', '%s', bad) end
    t.reason, t.msg, t.trace, t.who = ARGV[a + 13], ARGV[a + 14], ARGV[a + 15], ARGV[a + 16]
    if #t.reason == 0 then return err('DQ_EINVAL', 'task %d: reason: empty', k) end
    if not (len_ok(k, 'reason', t.reason, TEXT_MAX) and len_ok(k, 'error', t.msg, 4096) and
        len_ok(k, 'trace', t.trace, 65536) and len_ok(k, 'failed_by', t.who, TEXT_MAX)) then
      return err('DQ_EINVAL', '%s', bad)
    end
    if kind == 'f' and requeue then
      -- as requeue.lua does: attempts start again, no deadline, due now
      t.e.attempt, t.e.deadline, t.kind, t.due = 0, nil, 's', now
      -- and its history stays, marked so that it goes with the task (hist_requeued)
      if t.hist then hist_requeued(t.e, t) end
    end
  end
  -- a scheduled task's ack deletes its history only when the envelope says it may have
  -- one (hist_marked): one that says not would leave the key behind
  if t.hist and t.kind == 's' and t.e.attempt == 0 and not t.e.last_error then
    return err('DQ_EINVAL', 'task %d: history: a task with attempt 0 and no last_error has ' ..
      'none', k)
  end
  if t.kind == 's' then t.m = env_encode(t.e) end
  -- already there? (O(1) each: by task key in flight and failed, by id or by the exact
  -- member when scheduled; a generated id whose member changed since is not found)
  local status = seen[t.tk]
  if not status then
    if redis.call('HEXISTS', K_RUNNING, t.tk) == 1 then status = 2
    elseif redis.call('HEXISTS', K_FAILED, t.tk) == 1 then status = 3
    elseif t.e and t.e.id and redis.call('HEXISTS', K_IDS, t.e.id) == 1 then status = 1
    elseif t.m and redis.call('ZSCORE', K_SCHED, t.m) then status = 1
    end
  end
  t.status = status or 0
  seen[t.tk] = seen[t.tk] or (status or (t.kind == 's' and 1 or 3))
  if t.status == 0 and t.kind ~= 's' then new_failed = new_failed + 1 end
  tasks[k] = t
end
local have = redis.call('ZCARD', K_FAILIDX)
if new_failed > 0 and have + new_failed > cfg.failed_retention then
  return err('DQ_EINVAL', 'failed_retention: %d failed tasks here and %d to import is over ' ..
    'the limit of %d (raise it with delayq config failed_retention=N)', have, new_failed,
    cfg.failed_retention)
end

-- Everything is valid: write. The sequence first: generated ids the queue hands out
-- later must not collide with the imported ones. INCRBY (the producer's command for it)
-- reads with 0 and raises by the difference; a seq that is not a number fails here,
-- before any task is written.
if max_seq > 0 then
  local cur = redis.call('INCRBY', K_SEQ, 0)
  if max_seq > cur then redis.call('INCRBY', K_SEQ, dec(max_seq - cur)) end
end
-- Destination first is moot here (nothing is removed).
local first = next_due()
local earliest, added, nsched = nil, 0, 0
for k = 1, n do
  local t = tasks[k]
  local id = t.e and (t.e.id or dec(t.e.seq)) or t.tk
  local due = -1
  if t.status == 0 then
    added = added + 1
    if t.kind == 's' then
      redis.call('ZADD', K_SCHED, dec(t.due), t.m)
      if t.e.id then redis.call('HSET', K_IDS, t.e.id, dec(t.due) .. ':' .. dec(t.e.seq)) end
      if not earliest or t.due < earliest then earliest = t.due end
      due, nsched = t.due, nsched + 1
    else
      local raw = t.raw or env_encode(t.e)
      redis.call('HSET', K_FAILED, t.tk,
        fail_encode(raw, t.reason, t.msg, t.trace, t.at, t.who, t.kind == 'u'))
      redis.call('ZADD', K_FAILIDX, dec(t.at), t.tk)
      group_add(t.tk, t.reason, t.msg, t.at) -- exact error-group counts (PROTOCOL 4.6)
    end
    if t.hist then
      -- exactly the exported attempts, whatever a key of that name held before
      redis.call('DEL', hist_key(t.tk))
      redis.call('RPUSH', hist_key(t.tk), unpack(t.hist))
    end
  end
  out[#out + 1] = id
  out[#out + 1] = t.status
  out[#out + 1] = due
end
if earliest and (first < 0 or earliest < first) then
  wake(dec(earliest))
end
-- history (PROTOCOL.md 13): the scheduled ones entered the queue now; the failed ones
-- failed elsewhere, earlier, and count nowhere
roll.add('e', nsched)
roll.flush(cfg.history_minutes, now_ms())
audit(cfg, who, 'import', string.format('%d tasks%s', n, requeue and ' requeue' or ''),
  string.format('ok: %d imported (%d scheduled, %d failed), %d already there', added, nsched,
    added - nsched, n - added))
return out
