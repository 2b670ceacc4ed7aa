-- config_get: reads a queue's limits, for read-only users (config.lua reads them too,
-- but it may write, so FCALL_RO cannot run it).
-- KEYS: the eleven queue keys (see lib.lua); reads config.
-- ARGV: none.
-- Reply: the effective configuration as pairs {field, value, ...} in the order of
--   config.lua's reply (CFG_FIELDS, then partitions).
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(1): one HMGET, one HGET.
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('config_get', [[HMGET config HGET parts]])
if gate then return gate end
local K_PARTS = K_PREFIX .. 'parts' -- a partitioned queue's map (config.lua)
local cfg = config()
local out = {}
for _, f in ipairs(CFG_FIELDS) do
  out[#out + 1] = f
  out[#out + 1] = cfg[f]
end
out[#out + 1] = 'partitions'
out[#out + 1] = tonumber(redis.call('HGET', K_PARTS, 'n')) or 1
return out
