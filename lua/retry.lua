-- retry: transient failure. The task goes back to scheduled with attempt + 1, due after
-- the backoff min(backoff_cap_ms, backoff_base_ms * 2^attempt), keeping the message as
-- its last error; past max attempts it goes to failed as "attempts exhausted".
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, sched, ids, stats
--   (failed, failidx when exhausted).
-- ARGV: [1] task key, [2] attempt as claimed, [3] claim time (the fence, as for ack),
--   [4] error message (first 512 bytes kept), [5] who (worker name).
-- Reply: {exhausted (0|1), due ms (-1 when exhausted)}.
-- Errors: DQ_ELEASE as for ack.
-- Complexity: O(log N).
-- Flags: allow-oom (runs at maxmemory: moves the claimed task back, adding its last error (512
--   bytes) and a history entry; docs/OPERATIONS.md).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = worker_gate('retry', [[EXISTS group HDEL failed groups kin running stats
  HEXISTS groups HGET failed groups running HINCRBY kin roll stats tally HLEN groups HMGET
  config tally HSET failed groups ids tally LTRIM hist PEXPIREAT roll PUBLISH wake RPUSH
  hist TIME ZADD failidx group kpark sched ZCARD failidx kpark ZPOPMIN failidx kq ZRANGE
  sched ZREM group inflight kpark ZSCORE group]])
if gate then return gate end
allow_oom()
local cfg, now = config(), now_ms()
local due, bad = settle_retry(cfg, now, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if not due then return bad end
roll.flush(cfg.history_minutes, now) -- history (PROTOCOL.md 13)
if due < 0 then return {1, -1} end
return {0, due}
