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
local run, e, bad = holder(ARGV[1], ARGV[2], ARGV[3])
if not run then return bad end
local cfg = config()
local now = now_ms()
e.attempt = e.attempt + 1
to_failed(cfg, ARGV[1], env_encode(e), 'error', ARGV[4], ARGV[5], now, ARGV[6], false)
unrun(ARGV[1])
return 1
