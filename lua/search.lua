-- search: one bounded step of a search of a view, for the inspector's "/": a task
-- matches when its task key or its stored bytes contain the needle (plain bytes, smart
-- case: a needle with no ASCII capital letter matches letters in either case, one with
-- a capital matches exactly; text_needle in lib.lua): the envelope (id and payload) for
-- due and future, the running record (envelope and worker) for in flight, the failure
-- record (error, stack trace, envelope) for failed.
-- KEYS: the eleven queue keys (see lib.lua); read only.
-- ARGV: [1] view: 'due' | 'future' | 'inflight' | 'failed', [2] needle (1..200 bytes),
--   [3] cursor (a rank within the view, 0 first), [4] chunk (1..1000 tasks looked at),
--   [5] most matches to return (1..1000).
-- Reply: {next cursor (-1 when the view is done), tasks in the view, then per match the
--   same 3 fields as page.lua}. Failed is searched newest first, the others in page order.
--   The cursor is a rank: tasks added or removed during a search shift it, so a few may
--   be looked at twice or not at all.
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
-- Complexity: O(log N + chunk) (each task's bytes scanned once per needle position).
local view, needle, cursor = ARGV[1], ARGV[2], tonumber(ARGV[3])
local chunk, most = tonumber(ARGV[4]), tonumber(ARGV[5])
if #needle < 1 or #needle > DQ_NEEDLE_MAX then
  return err('DQ_EINVAL', 'needle: %d bytes; 1..%d', #needle, DQ_NEEDLE_MAX)
end
if not cursor or cursor < 0 or not chunk or chunk < 1 or chunk > DQ_STEP_MAX or not most
    or most < 1 or most > DQ_CALL_MAX then
  return err('DQ_EINVAL', 'search: cursor >= 0, chunk 1..%d and matches 1..%d', DQ_STEP_MAX,
    DQ_CALL_MAX)
end
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = viewer_gate('search', [[HMGET failed running TIME ZCARD failidx group inflight sched
  ZCOUNT sched ZRANGE sched]])
if gate then return gate end
local total, items, recs
if view == 'failed' or view == 'inflight' then
  local z, h, cmd = K_FAILIDX, K_FAILED, 'ZREVRANGE'
  if view == 'inflight' then z, h, cmd = K_INFLIGHT, K_RUNNING, 'ZRANGE' end
  total = redis.call('ZCARD', z)
  items = redis.call(cmd, z, cursor, cursor + chunk - 1, 'WITHSCORES')
  if #items > 0 then
    local tks = {}
    for i = 1, #items, 2 do tks[#tks + 1] = items[i] end
    recs = redis.call('HMGET', h, unpack(tks))
  end
elseif view == 'due' or view == 'future' then
  local due = redis.call('ZCOUNT', K_SCHED, '-inf', dec(now_ms()))
  local base, last = 0, due - 1
  total = due
  if view == 'future' then
    base, last = due, redis.call('ZCARD', K_SCHED) - 1
    total = last - due + 1
  end
  local from, to = base + cursor, math.min(base + cursor + chunk - 1, last)
  items = {}
  if from <= to then items = redis.call('ZRANGE', K_SCHED, from, to, 'WITHSCORES') end
else
  return err('DQ_EINVAL', 'view: %q is not due, future, inflight or failed', view)
end
local out = {-1, total}
local n = 0
local pat, plain = text_needle(needle)
for i = 1, #items, 2 do
  local key, rec = items[i], recs and (recs[(i + 1) / 2] or '') or ''
  if text_find(key, pat, plain) or text_find(rec, pat, plain) then
    out[#out + 1] = key
    out[#out + 1] = tonumber(items[i + 1])
    out[#out + 1] = rec
    n = n + 1
    if n == most then
      out[1] = cursor + (i + 1) / 2
      return out
    end
  end
end
if #items / 2 == chunk then out[1] = cursor + chunk end
return out
