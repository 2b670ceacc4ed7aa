-- release: hands a claimed task back unrun (a worker shutting down), due now, without
-- counting an attempt.
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, sched, ids.
-- ARGV: [1] task key, [2] attempt as claimed, [3] claim time (the fence, as for ack).
-- Reply: 1.
-- Errors: DQ_ELEASE when the caller no longer holds the lease.
-- Complexity: O(log N).
-- Flags: allow-oom (runs at maxmemory: moves the claimed task back to scheduled;
--   docs/OPERATIONS.md).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = worker_gate('release', [[HDEL running stats HGET running HSET ids PUBLISH wake TIME
  ZADD sched ZRANGE sched ZREM inflight
  HDEL kin HINCRBY kin stats HMGET config ZADD kpark ZCARD kpark ZPOPMIN kq ZREM kpark]])
if gate then return gate end
allow_oom()
local ok, bad = settle_release(now_ms(), ARGV[1], ARGV[2], ARGV[3])
if not ok then return bad end
return 1
