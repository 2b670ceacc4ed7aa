-- errors: the error groups of the failed set (docs/PROTOCOL.md 4.6), for `delayq errors`
-- and the inspector's Errors view: counts kept by the scripts, never a walk of the set.
-- KEYS: the eleven queue keys (see lib.lua); reads failidx, failed, and the groups keys.
-- ARGV: none.
-- Reply: {now, failed tasks, groups, then 7 per group, largest first (ties by newest):
--   group id, signature, count, first seen ms, last seen ms, sample task key (the
--   group's newest failure), the sample's error (its first line, first 200 bytes)}.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(G log N) for G groups (at most 501).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('errors', [[HGET failed HGETALL groups TIME ZCARD failidx group ZREVRANGE
  group]])
if gate then return gate end
local now = now_ms()
local all = redis.call('HGETALL', K_GROUPS)
local groups = {}
for i = 1, #all, 2 do
  local first, last, sig = string.match(all[i + 1], '^(%d+) (%d+) (.*)$')
  if first then
    local n = redis.call('ZCARD', K_GROUP .. all[i])
    local s = redis.call('ZREVRANGE', K_GROUP .. all[i], 0, 0)[1] or ''
    local f = s ~= '' and fail_decode(redis.call('HGET', K_FAILED, s) or '')
    local e = f and string.sub(string.match(f.msg, '^[^\r\n]*'), 1, 200) or ''
    groups[#groups + 1] = {all[i], sig, n, tonumber(first), tonumber(last), s, e}
  end
end
table.sort(groups, function(a, b)
  if a[3] ~= b[3] then return a[3] > b[3] end
  if a[5] ~= b[5] then return a[5] > b[5] end
  return a[1] < b[1]
end)
local out = {now, redis.call('ZCARD', K_FAILIDX), #groups}
for _, g in ipairs(groups) do
  for j = 1, 7 do out[#out + 1] = g[j] end
end
return out
