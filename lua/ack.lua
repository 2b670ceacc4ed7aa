-- ack: completes a claimed task; it leaves in-flight for good.
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, stats.
-- ARGV: [1] task key (generated id, or "c:" .. caller-chosen id), [2] attempt as claimed,
--   [3] the claim's server time (claim reply "now"): with [2], the fencing token.
-- Reply: 1.
-- Errors: DQ_ELEASE when the caller no longer holds the lease (reaped, or claimed again
--   by another worker at a higher attempt).
-- Complexity: O(log N) for N in flight.
local run, e, bad = holder(ARGV[1], ARGV[2], ARGV[3])
if not run then return bad end
unrun(ARGV[1])
redis.call('HINCRBY', K_STATS, 'done', 1)
return 1
