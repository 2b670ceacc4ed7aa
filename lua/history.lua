-- history: the queue's per-minute rollups (PROTOCOL.md 13) over the last span_min
-- minutes, summed into steps of step_min minutes, in one read-only call.
-- KEYS: the eleven queue keys (see lib.lua); reads config and the derived per-minute
--   hashes dq:{Q}:roll:<minute> (named from KEYS[1]).
-- ARGV: [1] span_min (1..1440: the minutes read, ending with the current one), [2]
--   step_min (1..1440), [3] end_min (optional: the last minute read, ms / 60000, within
--   the 10080 before the current one; absent: the current one), so a reader of 7 days
--   reads them in chunks that a minute turning between its calls cannot shift. Steps are
--   aligned: each starts at a minute m with m % step_min == 0, so the first step may hold
--   fewer minutes than step_min (only those in the span).
-- Reply: a flat array of integers: {version (1), now ms, history_minutes (the queue's
--   retention; 0: off), step ms, nrows, then nrows rows oldest first, 25 integers each:
--   at ms (the step's aligned start), e, s, d, r, f, x, q, p, l, h0 .. h11, t (sums over
--   the step's minutes), b, a (the latest sample in the step; -1, -1 when none has
--   one)}. A step with no hash at all is there too, zeros and -1, -1.
-- Errors: DQ_EINVAL naming span_min, step_min or end_min and the range.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(span_min): one HMGET of 24 fields per minute read (at most 1440), and
--   one of the config.
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('history', [[HMGET config roll TIME]])
if gate then return gate end
local span, step = tonumber(ARGV[1]), tonumber(ARGV[2])
if not span or span < 1 or span > 1440 or span ~= math.floor(span) then
  return err('DQ_EINVAL', 'span_min: %q is not in 1..1440', tostring(ARGV[1]))
end
if not step or step < 1 or step > 1440 or step ~= math.floor(step) then
  return err('DQ_EINVAL', 'step_min: %q is not in 1..1440', tostring(ARGV[2]))
end
local hm = config_of({'history_minutes'}).history_minutes
local now = now_ms()
local last = math.floor(now / 60000)
if ARGV[3] ~= nil then
  local e = tonumber(ARGV[3])
  if not e or e ~= math.floor(e) or e > last or e < last - 10080 then
    return err('DQ_EINVAL', 'end_min: %q is not in %d..%d (minutes, the current one last)',
      tostring(ARGV[3]), last - 10080, last)
  end
  last = e
end
local first = last - span + 1
-- the fields of a minute, in reply order; b and a last
local F = {'e', 's', 'd', 'r', 'f', 'x', 'q', 'p', 'l', 'h0', 'h1', 'h2', 'h3', 'h4', 'h5',
  'h6', 'h7', 'h8', 'h9', 'h10', 'h11', 't', 'b', 'a'}
local NSUM = 22 -- e .. t are summed
-- a field's value, or nil when it is not a whole number a writer could have left (a
-- foreign write's text, inf or nan count as absent)
local function whole(v)
  local n = tonumber(v)
  if n and n == math.floor(n) and n > -1e15 and n < 1e15 then return n end
  return nil
end
local s0 = math.floor(first / step)
local nrows = math.floor(last / step) - s0 + 1
local out = {1, now, hm, step * 60000, nrows}
for row = 0, nrows - 1 do
  local at = (s0 + row) * step
  local sums = {}
  for i = 1, NSUM do sums[i] = 0 end
  local b, a = -1, -1
  for m = math.max(at, first), math.min(at + step - 1, last) do
    local rk = K_PREFIX .. 'roll:' .. dec(m)
    local v = redis.call('HMGET', rk, unpack(F))
    for i = 1, NSUM do
      local n = whole(v[i])
      if n then sums[i] = sums[i] + n end
    end
    local vb = whole(v[23])
    if vb then b, a = vb, whole(v[24]) or 0 end
  end
  out[#out + 1] = at * 60000
  for i = 1, NSUM do out[#out + 1] = sums[i] end
  out[#out + 1] = b
  out[#out + 1] = a
end
return out
