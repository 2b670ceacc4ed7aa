-- fail: permanent failure. The task goes to failed with its error, stack trace, time,
-- attempts and who failed it; retention then trims the oldest failures beyond
-- failed_retention, counting them as trimmed.
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, failed, failidx,
--   stats.
-- ARGV: [1] task key, [2] attempt as claimed, [3] claim time (the fence, as for ack),
--   [4] error message (first 4 KiB kept), [5] stack trace (first 64 KiB kept; may be
--   empty), [6] who.
-- Reply: 1.
-- Errors: DQ_ELEASE as for ack.
-- Complexity: O(log N), plus O(k log N) when k old failures are trimmed (k <= 1000).
-- Flags: allow-oom (runs at maxmemory: moves the claimed task to failed, adding its error and
--   trace (at most 4 KiB + 64 KiB); docs/OPERATIONS.md).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = worker_gate('fail', [[EXISTS group HDEL failed groups kin running stats HEXISTS
  groups HGET failed groups running HINCRBY kin roll stats tally HLEN groups HMGET config
  tally HSET failed groups tally LTRIM hist PEXPIREAT roll PUBLISH wake RPUSH hist TIME ZADD
  failidx group kpark sched ZCARD failidx kpark ZPOPMIN failidx kq ZRANGE sched ZREM group
  inflight kpark ZSCORE group]])
if gate then return gate end
allow_oom()
local cfg, now = config(), now_ms()
local ok, bad = settle_fail(cfg, now, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
if not ok then return bad end
roll.flush(cfg.history_minutes, now) -- history (PROTOCOL.md 13)
return 1
