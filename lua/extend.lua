-- extend: renews the leases of tasks a worker is still running, so they are not
-- reaped while their handlers work.
-- KEYS: the eleven queue keys (see lib.lua); writes inflight.
-- ARGV: [1] lease ms (1..86400000), then triples of (task key, attempt as claimed, claim
--   time), 1..1000 triples: the fence, as for ack.
-- Reply: one integer per triple: the new lease deadline ms, or -1 when the caller no
--   longer holds that lease (reaped, or claimed again at a higher attempt).
-- Complexity: O(k log N) for k pairs.
-- Flags: allow-oom (runs at maxmemory: moves existing leases (ZADD XX); docs/OPERATIONS.md).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = worker_gate('extend', [[HDEL stats HGET running TIME ZADD inflight]])
if gate then return gate end
allow_oom()
local now = now_ms()
local lease = tonumber(ARGV[1])
if not lease or lease < 1 or lease > 86400000 or lease ~= math.floor(lease) then
  return err('DQ_EINVAL', 'lease: %q ms is not in 1..86400000', ARGV[1])
end
local n = (#ARGV - 1) / 3
if n < 1 or n > DQ_CALL_MAX or n ~= math.floor(n) then
  return err('DQ_EINVAL', 'extend: %d arguments; expected 1..%d (task key, attempt, ' ..
    'claim time) triples', #ARGV - 1, DQ_CALL_MAX)
end
local out = {}
for i = 2, #ARGV, 3 do
  local r = redis.call('HGET', K_RUNNING, ARGV[i])
  -- the fence read in place (as ack does); a record of another layout is decoded
  local held = r and fence_quick(r, ARGV[i + 1], ARGV[i + 2])
  if r and held == nil then
    local run = run_decode(r)
    local e = run and env_decode(run.m)
    held = e and e.attempt == tonumber(ARGV[i + 1]) and run.claimed == tonumber(ARGV[i + 2])
  end
  if held then
    redis.call('ZADD', K_INFLIGHT, 'XX', dec(now + lease), ARGV[i])
    out[#out + 1] = now + lease
  else
    out[#out + 1] = -1
  end
end
return out
