-- claim: settles the results a worker holds (optional), then moves up to batch tasks
-- that are due, or due within the next `ahead` ms, to in-flight under a lease.
-- KEYS: the eleven queue keys (see lib.lua); writes sched, ids, inflight, running, and
--   failed/failidx/stats for members that cannot run; settling writes what ack, retry,
--   fail and release write (with done retention, ack's done/doneidx); a schedule's
--   firing writes seq, stats, sched, ids and the derived sdefs, snext and slow keys
--   (PROTOCOL.md 5.30); with a queue limit on, the derived limits HASH and stats
--   (PROTOCOL.md 8.4).
-- ARGV: [1] batch (0..1000; 0 settles only), [2] lease ms (1..86400000), [3] worker name;
--   optional: [4] ahead ms (0..1000, default 0), [5] who (failure records; default the
--   worker name), then 6 per result, 0..1000 results, each settled exactly as its own
--   script would (sections 5.5-5.10 of docs/PROTOCOL.md): outcome ('a' ack, 'r' retry,
--   'f' fail, 'l' release), task key, attempt as claimed, claim time, message (retry,
--   fail), trace (fail); then optionally 'd' (with [4] and [5] given): the reply ends
--   with the queue's done flag, which its acks pass to ack (PROTOCOL.md 4.7).
-- Fires the periodic schedules that are due first (at most 10; PROTOCOL.md 5.30), by
--   server time, each firing one ordinary task; their next firing counts as a due time.
-- Reply: {now ms, next due ms (-1 if nothing is scheduled), moved to failed,
--   envelope 1, due 1, envelope 2, due 2, ..., then one entry per result, in order:
--   1 (ack, fail, release) or the next due ms / -1 when exhausted (retry), or that
--   result's DQ_ELEASE / DQ_EPROTO error text, then, when ahead ms was given, now_us:
--   the microseconds of the claim's TIME past now (0..999), then, when 'd' was given, 1
--   if the queue keeps done tasks (done_retention or done_retention_ms > 0), else 0}. Tasks come in due order,
--   ties in enqueue order; a task claimed ahead has due > now, and must not start before
--   the worker's own clock has let (due - now) ms - now_us us pass since the reply
--   arrived (PROTOCOL.md 10.2).
--   A due member that is not a valid envelope goes to failed as "undecodable" (raw bytes
--   kept); one whose deadline passed goes to failed as "expired".
-- Queue limits (rate_limit, concurrency_limit, a throttle; PROTOCOL.md 8.4): it leases
--   at most what they allow; when one held a due task back, next due is when to ask
--   again (the next token's time; -1 for concurrency: a wake-up comes when a settled
--   result frees a slot), the reply's shape unchanged.
-- Publishes 'lease:<deadline ms>' on the wake channel when its lease is now the earliest
-- (workers then know when to reap it, section 10 of docs/PROTOCOL.md), and at most one
-- due time for all the retries and releases it scheduled.
-- While the queue is paused (pause.lua) it settles the results but claims nothing and
--   moves nothing; the reply then has, right after the first three elements, the string
--   'paused' and the pause's end (0: until resumed, else server ms), so a worker knows
--   how long to sleep (an envelope never equals 'paused': it starts with an array byte).
-- Complexity: O(log N + (batch + results) log N), plus O(log N + P) per schedule fired
--   (P its payload bytes).
-- Flags: allow-oom (runs at maxmemory: moves due tasks to in-flight; settles as ack, retry, fail
--   and release do; docs/OPERATIONS.md).
local gate = worker_gate('claim', [[EXISTS group HDEL failed groups ids running stats
  HEXISTS failed groups running HGET failed groups ids running sdefs stpl HINCRBY roll stats
  tally HLEN groups HMGET config pause running tally HSET failed groups ids running sdefs
  tally INCRBY seq LTRIM hist PEXPIREAT roll PUBLISH wake RPUSH hist TIME ZADD failidx group
  inflight sched slow snext uniq ZCARD failidx ZPOPMIN failidx ZRANGE inflight sched snext
  ZRANGEBYSCORE sched uniq ZREM group inflight sched snext uniq ZSCORE group]])
if gate then return gate end
-- Only the fields claim and the settles, limits, schedules and done records it runs read
-- (a HMGET of all of them cost ~4 us a call): add a field here when a helper it calls
-- starts reading one.
local cfg = config_of({'backoff_base_ms', 'backoff_cap_ms', 'max_attempts', 'failed_retention',
  'done_retention', 'done_retention_ms', 'rate_limit', 'rate_burst', 'concurrency_limit',
  'key_concurrency', 'throttle_rate', 'throttle_concurrency', 'throttle_until',
  'history_minutes'})
-- done retention's commands (PROTOCOL.md 4.7) are checked only when it is on, before any
-- write, so a claim without it pays for no more checks
-- (either limit turns it on: PROTOCOL.md 4.7)
local keeps = cfg.done_retention > 0 or cfg.done_retention_ms > 0
if keeps then
  gate = worker_gate('claim_done', [[HDEL done HSET done ZADD doneidx ZCARD doneidx ZCOUNT
    doneidx ZPOPMIN doneidx]])
  if gate then return gate end
end
-- likewise the queue limits' (PROTOCOL.md 8.4), only while one is set
if cfg.rate_limit > 0 or cfg.concurrency_limit > 0 or cfg.throttle_until >= 0 then
  gate = worker_gate('claim_limits', [[HDEL limits HGET limits HINCRBY stats HMGET limits HSET
    limits PUBLISH wake ZCARD inflight]])
  if gate then return gate end
end
allow_oom()
local now, now_us = now_ms_us()
local batch, lease, worker = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local ahead = tonumber(ARGV[4] or '0')
local who = ARGV[5] or worker
if not batch or batch < 0 or batch > DQ_CALL_MAX or batch ~= math.floor(batch) then
  return err('DQ_EINVAL', 'batch: %q is not in 0..%d', ARGV[1], DQ_CALL_MAX)
end
if not lease or lease < 1 or lease > 86400000 or lease ~= math.floor(lease) then
  return err('DQ_EINVAL', 'lease: %q ms is not in 1..86400000', ARGV[2])
end
if not ahead or ahead < 0 or ahead > 1000 or ahead ~= math.floor(ahead) then
  return err('DQ_EINVAL', 'ahead: %q ms is not in 0..1000', tostring(ARGV[4]))
end
-- a last 'd' after the results asks whether the queue keeps done tasks (done retention)
local nres, tell = 0, #ARGV >= 6 and (#ARGV - 5) % 6 == 1
if tell then
  if ARGV[#ARGV] ~= 'd' then
    return err('DQ_EINVAL', 'claim: last argument %q is not d', ARGV[#ARGV])
  end
  nres = (#ARGV - 6) / 6
elseif #ARGV >= 5 then
  nres = (#ARGV - 5) / 6
end
if nres ~= math.floor(nres) or nres > DQ_CALL_MAX then
  return err('DQ_EINVAL', 'claim: %d arguments; expected 3, 4, or 5 and then 6 per result ' ..
    '(0..%d results), then optionally d', #ARGV, DQ_CALL_MAX)
end
local last = 5 + 6 * nres -- the last result's last argument
local SETTLE = {a = true, r = true, f = true, l = true}
for i = 6, last, 6 do
  if not SETTLE[ARGV[i]] then
    return err('DQ_EINVAL', 'result %d: outcome %q is not a, r, f or l', (i - 6) / 6 + 1, ARGV[i])
  end
end

-- Per-key limits (PROTOCOL.md 4.10): their commands are checked only when this call can
-- run them: the limit is on, a result is not an ack, or an acked task has a key (the
-- acks' running records are read here once; settle_acks takes them).
local ack_recs
if cfg.key_concurrency == 0 and nres > 0 then
  local tks = {}
  for i = 6, last, 6 do
    tks[#tks + 1] = ARGV[i] == 'a' and ARGV[i + 1] or nil
  end
  if #tks == nres then ack_recs = redis.call('HMGET', K_RUNNING, unpack(tks)) end
end
if cfg.key_concurrency > 0 or (nres > 0 and (not ack_recs or key_any(ack_recs))) then
  gate = worker_gate('claim_keys', [[HDEL kin HGET kin HINCRBY kin HMGET kin ZADD kpark kq
    ZCARD kpark ZPOPMIN kq ZREM kpark]])
  if gate then return gate end
end

-- 1. Settle. Results go first: they end leases and free the worker's slots.
local results = {}
if nres > 0 then
  local first, earliest, done = next_due(), -1, 0
  -- Acks all at once (settle_acks), unless another result names one of their tasks:
  -- then all go one by one, in order, as separate calls would.
  local tks, atts, clms, at, acked, alone = {}, {}, {}, {}, {}, false
  local kept = keeps and {} or nil -- done retention (PROTOCOL.md 4.7)
  for i = 6, last, 6 do
    if ARGV[i] == 'a' then
      local j = #tks + 1
      tks[j], atts[j], clms[j], at[j] = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], i
      acked[ARGV[i + 1]] = true
    end
  end
  for i = 6, last, 6 do
    if ARGV[i] ~= 'a' and acked[ARGV[i + 1]] then alone = true end
  end
  if not alone and #tks > 0 then
    local res, n = settle_acks(tks, atts, clms, kept, ack_recs)
    done = n
    for j, i in ipairs(at) do
      results[(i - 6) / 6 + 1] = res[j] == 1 and 1 or res[j].err
      -- a run's time: the claim time its fence named (history, PROTOCOL.md 13)
      if res[j] == 1 and cfg.history_minutes > 0 then roll.run(now - tonumber(clms[j])) end
    end
  end
  for i = 6, last, 6 do
    local what, tk, att, clm = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
    local r, bad
    if what == 'a' then
      if alone then
        r, bad = settle_ack(tk, att, clm, kept)
        if r then
          done = done + 1
          roll.run(now - tonumber(clm))
        end
      else
        r = results[(i - 6) / 6 + 1]
      end
    elseif what == 'r' then
      r, bad = settle_retry(cfg, now, tk, att, clm, ARGV[i + 4], who, true)
      if r and r >= 0 and (earliest < 0 or r < earliest) then earliest = r end
    elseif what == 'f' then
      r, bad = settle_fail(cfg, now, tk, att, clm, ARGV[i + 4], ARGV[i + 5], who)
    else
      r, bad = settle_release(now, tk, att, clm, true)
      if r and (earliest < 0 or now < earliest) then earliest = now end
    end
    results[(i - 6) / 6 + 1] = r or bad.err
  end
  if done > 0 then
    redis.call('HINCRBY', K_STATS, 'done', done)
    tally('d', done, now)
    roll.add('d', done)
    if kept then keep_done(cfg.done_retention, cfg.done_retention_ms, now, kept) end
  end
  if earliest >= 0 and (first < 0 or earliest < first) then
    wake(dec(earliest))
  end
end

-- 2. Fire the periodic schedules that are due (lib.lua sched_fire), so their tasks can
-- be claimed below; not while the queue is paused (a resume then fires each once).
local paused = pause_get(now)
local soonest, fired = -1, 0
if not paused then soonest, fired = sched_fire(cfg, now) end

-- 3. Claim, unless the queue is paused.
local items, lim, peeks = {}, nil, nil
if batch > 0 and not paused then
  -- queue limits (lib.lua): one task past what they allow tells that one was held back
  lim = limits.allow(cfg, now, ahead, batch)
  items = redis.call('ZRANGEBYSCORE', K_SCHED, '-inf', dec(now + ahead), 'WITHSCORES',
    'LIMIT', 0, lim and lim.allow < batch and lim.allow + 1 or batch)
  if lim then limits.cut(lim, items) end
  -- per-key limits (lib.lua key_admit): parks the keyed tasks whose key is full
  if cfg.key_concurrency > 0 and #items > 0 then
    items, peeks = key_admit(cfg, items, now, ahead, batch)
  end
end
local out = {now, 0, 0}
local moved = 0
-- The earliest lease before this claim: when ours comes first, idle workers are told,
-- so they reap it should this worker die (they only know the leases they have seen).
local first_lease = -1
if #items > 0 then
  local f = redis.call('ZRANGE', K_INFLIGHT, 0, 0, 'WITHSCORES')
  if #f == 2 then first_lease = tonumber(f[2]) end
end
-- Writes are gathered into one variadic command each; destination first: running and
-- inflight before the task leaves sched, so a failed write leaves it where it was.
local run, inflight, gone, gone_ids = {}, {}, {}, {}
local mid, lease_at = p_str(worker) .. p_uint(now), dec(now + lease) -- the same for all
for i = 1, #items, 2 do
  local m, due = items[i], tonumber(items[i + 1])
  local tk, id, deadline
  local j = (i + 1) / 2 * 3 -- key_admit's reading of this member, if it read it
  if peeks and peeks[j - 2] then
    tk, id, deadline = peeks[j - 2], peeks[j - 1] or nil, peeks[j] or nil
  else
    tk, id, deadline = env_peek(m)
  end
  if not tk then
    to_failed(cfg, undecodable_key(m), m, 'undecodable',
      'scheduled member is not a delayq v1 envelope', '', now, worker, true)
    moved = moved + 1
  elseif deadline and now > deadline then
    local msg = string.format('claimed %s ms after its deadline', dec(now - deadline))
    local e = env_decode(m) -- this rare path only: env_peek gives no attempt
    hist_add(tk, (e and e.attempt or 0) + 1, now, worker, 'expired', now, msg)
    to_failed(cfg, tk, m, 'expired', msg, '', now,
      worker, false, 'expired')
    moved = moved + 1
  else
    run[#run + 1] = tk
    run[#run + 1] = run_encode(m, worker, now, due, mid)
    inflight[#inflight + 1] = lease_at
    inflight[#inflight + 1] = tk
    out[#out + 1] = m
    out[#out + 1] = due
  end
  gone[#gone + 1] = m
  if id then gone_ids[#gone_ids + 1] = id end
end
local leased = #run > 0
if leased then
  redis.call('HSET', K_RUNNING, unpack(run))
  redis.call('ZADD', K_INFLIGHT, unpack(inflight))
end
if #gone > 0 then redis.call('ZREM', K_SCHED, unpack(gone)) end
if #gone_ids > 0 then redis.call('HDEL', K_IDS, unpack(gone_ids)) end
out[2] = next_due()
if soonest >= 0 and (out[2] < 0 or soonest < out[2]) then out[2] = soonest end
if lim then out[2] = limits.taken(lim, #run / 2) or out[2] end -- held: when to ask again
if nres > 0 then limits.freed(cfg, now) end
if fired > 0 and batch == 0 then wake(dec(now)) end
out[3] = moved
if paused then
  out[4], out[5] = 'paused', paused.till
end
if leased and (first_lease < 0 or now + lease < first_lease) then
  wake('lease:' .. dec(now + lease))
end
for _, r in ipairs(results) do
  out[#out + 1] = r
end
if ARGV[4] then out[#out + 1] = now_us end
if tell then out[#out + 1] = keeps and 1 or 0 end
-- history (PROTOCOL.md 13): this call's counts, one HINCRBY per field
roll.add('s', #run / 2)
roll.flush(cfg.history_minutes, now)
return out
