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
local run, e, bad = holder(ARGV[1], ARGV[2], ARGV[3])
if not run then return bad end
local cfg = config()
local now = now_ms()
local msg = truncate(ARGV[4], 512)
e.attempt = e.attempt + 1
e.last_error = msg
if e.max > 0 and e.attempt >= e.max then
  to_failed(cfg, ARGV[1], env_encode(e), 'attempts exhausted', msg, '', now, ARGV[5], false)
  unrun(ARGV[1])
  return {1, -1}
end
local backoff = cfg.backoff_base_ms * math.pow(2, e.attempt - 1)
if backoff > cfg.backoff_cap_ms then backoff = cfg.backoff_cap_ms end
local due = now + math.floor(backoff)
schedule(e, due)
unrun(ARGV[1])
redis.call('HINCRBY', K_STATS, 'retried', 1)
return {0, due}
