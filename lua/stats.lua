-- stats: counts and cumulative counters of a queue, in one read-only call.
-- KEYS: the eleven queue keys (see lib.lua); reads sched, inflight, failidx, stats,
--   config.
-- ARGV: none.
-- Reply: {now, due, future, far future (due after now + far_future_ms), in flight,
--   failed, expired leases, next due ms (the earliest due time after now; -1 if none),
--   oldest due age ms (0 if nothing is due), far_future_ms, then the counters enqueued, done, retried, failed, expired,
--   trimmed, reaped, requeued, dropped, then the pause: paused (0|1), paused since ms (-1),
--   paused until ms (-1 not paused, 0 until resumed), paused by, reason (strings, '' when
--   not paused), then the outcomes over the verdict's window (alert_window_ms, in whole
--   minutes of server time, the current one included): window ms, the part of it that
--   has passed (ms), done, failed, retried in it; then the largest error group's
--   signature and count when the window's failures cross alert_fail_pct or
--   alert_fail_per_min ('' and 0 otherwise), then parked: keyed tasks parked because their
--   key is at key_concurrency (PROTOCOL.md 4.10; not counted in due or future); then the
--   queue limits (PROTOCOL.md 8.4):
--   the counters limited_rate and limited_concurrency, the limits in force (rate a
--   minute, burst, concurrency; 0: off), when the rate limit last held a task back (ms;
--   -1: never), 1 when a claim is waiting for a slot to free (else 0), then the throttle:
--   in force (0|1), its rate and concurrency, since ms (-1), until ms (-1: none, 0: until
--   lifted), by and reason (strings, '' when none), then the all-time run times (history,
--   PROTOCOL.md 13; cumulative, never trimmed): the 12 bucket counts h0 .. h11 and the
--   sum of the run times t (ms), then the size of the queue's partition map (HLEN
--   dq:{Q}:parts; 0: not partitioned), so a client knows a queue of one partition without
--   reading the map (PROTOCOL.md 14.3)}.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(log N): ZCOUNT, ZCARD and HMGET only; O(G) more for G error groups (at
--   most 501) only while the window's failures cross a threshold.
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('stats', [[HGETALL groups HLEN parts HMGET config limits pause stats tally
  TIME ZCARD failidx group inflight sched ZCOUNT inflight sched ZRANGE sched ZRANGEBYSCORE sched]])
if gate then return gate end
local cfg = config()
local now = now_ms()
local due = redis.call('ZCOUNT', K_SCHED, '-inf', dec(now))
local total = redis.call('ZCARD', K_SCHED)
local far = redis.call('ZCOUNT', K_SCHED, '(' .. dec(now + cfg.far_future_ms), '+inf')
local inflight = redis.call('ZCARD', K_INFLIGHT)
local failed = redis.call('ZCARD', K_FAILIDX)
local expired = redis.call('ZCOUNT', K_INFLIGHT, '-inf', '(' .. dec(now))
local first = next_due()
local age = 0
if first >= 0 and first <= now then age = now - first end
local nxt = redis.call('ZRANGEBYSCORE', K_SCHED, '(' .. dec(now), '+inf', 'WITHSCORES', 'LIMIT',
  0, 1)
local out = {now, due, total - due, far, inflight, failed, expired, tonumber(nxt[2]) or -1, age,
  cfg.far_future_ms}
local c = redis.call('HMGET', K_STATS, 'enqueued', 'done', 'retried', 'failed', 'expired',
  'trimmed', 'reaped', 'requeued', 'dropped', 'parked', 'limited_rate', 'limited_concurrency',
  'h0', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8', 'h9', 'h10', 'h11', 't')
for i = 1, 9 do
  out[#out + 1] = tonumber(c[i]) or 0
end
local p = pause_get(now)
local tail = {0, -1, -1, '', ''}
if p then tail = {1, p.since, p.till, p.by, p.reason} end
for i = 1, 5 do
  out[#out + 1] = tail[i]
end
-- the window: minutes m - k + 1 .. m of the tally ring (lib.lua)
local k = math.ceil(cfg.alert_window_ms / 60000)
local done, failed, retried = tally_read(now, k)
local wd, wf, wr = 0, 0, 0
for i = 0, k - 1 do
  wd, wf, wr = wd + done[i], wf + failed[i], wr + retried[i]
end
local elapsed = (k - 1) * 60000 + now % 60000
out[#out + 1] = k * 60000
out[#out + 1] = elapsed
out[#out + 1] = wd
out[#out + 1] = wf
out[#out + 1] = wr
-- the verdict names the largest group only when it will say the queue is failing (the
-- same rule as src/fmt/health.c: a ratio needs 10 outcomes)
local sig, top = '', 0
if wf > 0 and ((wd + wf >= 10 and wf * 100 >= cfg.alert_fail_pct * (wd + wf)) or
    wf * 60000 >= cfg.alert_fail_per_min * elapsed) then
  local all = redis.call('HGETALL', K_GROUPS)
  for i = 1, #all, 2 do
    local n = redis.call('ZCARD', K_GROUP .. all[i])
    if n > top then
      top, sig = n, string.match(all[i + 1], '^%d+ %d+ (.*)$') or ''
    end
  end
end
out[#out + 1] = sig
out[#out + 1] = top
out[#out + 1] = tonumber(c[10]) or 0
-- the queue limits (lib.lua limits), reading their hash only while one is in force
local rate, burst, conc = limits.of(cfg, now)
local lh = {false, false}
if rate > 0 or conc > 0 then lh = redis.call('HMGET', K_LIMITS, 'rate_held', 'held') end
local th = {0, 0, 0, -1, -1, '', ''}
if cfg.throttle_until == 0 or cfg.throttle_until > now then
  local t = redis.call('HMGET', K_CONFIG, 'throttle_since', 'throttle_by', 'throttle_reason')
  th = {1, cfg.throttle_rate, cfg.throttle_concurrency, tonumber(t[1]) or -1,
    cfg.throttle_until, t[2] or '', t[3] or ''}
end
local tail2 = {tonumber(c[11]) or 0, tonumber(c[12]) or 0, rate, burst, conc,
  tonumber(lh[1]) or -1, lh[2] and 1 or 0}
for i = 1, 7 do out[#out + 1] = tail2[i] end
for i = 1, 7 do out[#out + 1] = th[i] end
-- the run-time histogram (lib.lua roll), in the same HMGET of the stats hash
for i = 13, 25 do out[#out + 1] = math.max(0, math.floor(tonumber(c[i]) or 0)) end
local K_PARTS = K_PREFIX .. 'parts' -- a partitioned queue's map (config.lua): its size
out[#out + 1] = redis.call('HLEN', K_PARTS)
return out
