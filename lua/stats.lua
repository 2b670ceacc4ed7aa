-- stats: counts and cumulative counters of a queue, in one read-only call.
-- KEYS: the eleven queue keys (see lib.lua); reads sched, inflight, failidx, stats,
--   config.
-- ARGV: none.
-- Reply: {now, due, future, far future (due after now + far_future_ms), in flight,
--   failed, expired leases, next due ms (the earliest due time after now; -1 if none),
--   oldest due age ms (0 if nothing is due), far_future_ms, then the counters enqueued, done, retried, failed, expired,
--   trimmed, reaped, requeued, dropped, then the pause: paused (0|1), paused since ms (-1),
--   paused until ms (-1 not paused, 0 until resumed), paused by, reason (strings, '' when
--   not paused)}.
-- Complexity: O(log N): ZCOUNT, ZCARD and HMGET only.
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
  'trimmed', 'reaped', 'requeued', 'dropped')
for i = 1, 9 do
  out[#out + 1] = tonumber(c[i]) or 0
end
local p = pause_get(now)
local tail = {0, -1, -1, '', ''}
if p then tail = {1, p.since, p.till, p.by, p.reason} end
for i = 1, 5 do
  out[#out + 1] = tail[i]
end
return out
