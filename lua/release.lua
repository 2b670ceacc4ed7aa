-- release: hands a claimed task back unrun (a worker shutting down), due now, without
-- counting an attempt.
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, sched, ids, and
--   for a keyed task the per-key keys kin, kq:<key>, kpark (lib.lua key_left).
-- ARGV: [1] task key, [2] attempt as claimed, [3] claim time (the fence, as for ack).
-- Reply: 1.
-- Errors: DQ_ELEASE when the caller no longer holds the lease.
-- Complexity: O(log N).
-- Flags: allow-oom (runs at maxmemory: moves the claimed task back to scheduled;
--   docs/OPERATIONS.md).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = worker_gate('release', [[HDEL running stats HGET running HSET ids PUBLISH wake TIME
  ZADD sched ZRANGE sched ZREM inflight]])
if gate then return gate end
-- per-key limits (PROTOCOL.md 4.10): only the release of a keyed task checks what its
-- key's settle writes, so releasing an unkeyed one still touches only the eleven keys
if key_any({redis.call('HGET', K_RUNNING, ARGV[1]) or false}) then
  gate = worker_gate('release_keys', [[HDEL kin HINCRBY kin stats HMGET config ZADD kpark
    ZCARD kpark ZPOPMIN kq ZREM kpark]])
  if gate then return gate end
end
allow_oom()
local ok, bad = settle_release(now_ms(), ARGV[1], ARGV[2], ARGV[3])
if not ok then return bad end
return 1
