-- audit: reads the newest entries of the operator-action log.
-- KEYS: the eleven queue keys (see lib.lua); reads audit.
-- ARGV: [1] count (1..1000).
-- Reply: entries newest first, each {stream id ("<ms>-<n>"), {field, value, ...}} with
--   fields who, action, detail, result.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(count).
local n = tonumber(ARGV[1])
if not n or n < 1 or n > DQ_CALL_MAX or n ~= math.floor(n) then
  return err('DQ_EINVAL', 'limit: %q is not in 1..%d', ARGV[1], DQ_CALL_MAX)
end
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('audit', [[XREVRANGE audit]])
if gate then return gate end
return redis.call('XREVRANGE', K_AUDIT, '+', '-', 'COUNT', n)
