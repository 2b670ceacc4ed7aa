-- search: one bounded step of a search of the failed set, newest first, for the
-- inspector's "/": a failure matches when its task key or its failure record (error,
-- stack trace, envelope with the payload bytes) contains the needle (plain bytes, case
-- sensitive).
-- KEYS: the eleven queue keys (see lib.lua); read only.
-- ARGV: [1] needle (1..200 bytes), [2] cursor (rank to start at, 0 first), [3] chunk
--   (1..1000 failures looked at), [4] most matches to return (1..1000).
-- Reply: {next cursor (-1 when the set is done), failed total, then per match: task key,
--   failed ms, failure record}. The cursor is a rank: failures added during a search
--   shift it, so a few may be looked at twice or not at all.
-- Complexity: O(log N + chunk).
local needle, cursor = ARGV[1], tonumber(ARGV[2])
local chunk, most = tonumber(ARGV[3]), tonumber(ARGV[4])
if #needle < 1 or #needle > 200 then
  return err('DQ_EINVAL', 'needle: %d bytes; 1..200', #needle)
end
if not cursor or cursor < 0 or not chunk or chunk < 1 or chunk > 1000 or not most or
    most < 1 or most > 1000 then
  return err('DQ_EINVAL', 'search: cursor >= 0, chunk 1..1000 and matches 1..1000')
end
local total = redis.call('ZCARD', K_FAILIDX)
local items = redis.call('ZREVRANGE', K_FAILIDX, cursor, cursor + chunk - 1, 'WITHSCORES')
local out = {-1, total}
if #items == 0 then return out end
local tks = {}
for i = 1, #items, 2 do tks[#tks + 1] = items[i] end
local recs = redis.call('HMGET', K_FAILED, unpack(tks))
local n = 0
for i = 1, #tks do
  local rec = recs[i] or ''
  if string.find(tks[i], needle, 1, true) or string.find(rec, needle, 1, true) then
    out[#out + 1] = tks[i]
    out[#out + 1] = tonumber(items[2 * i])
    out[#out + 1] = rec
    n = n + 1
    if n == most then
      out[1] = cursor + i
      return out
    end
  end
end
if #tks == chunk then out[1] = cursor + chunk end
return out
