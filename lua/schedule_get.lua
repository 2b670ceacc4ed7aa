-- schedule_get: the periodic schedules of a queue, for `delayq schedule ls`, the
-- inspector and the worker that tops up cron lists (PROTOCOL.md 5.30). Read-only.
-- KEYS: the eleven queue keys (see lib.lua); reads the derived sdefs and snext keys.
-- ARGV: none.
-- Reply: {now ms, then 16 fields per schedule, in name order: name, spec ('' for
--   every), zone, every ms (0 for cron), paused (0|1), next firing ms (-1: none),
--   last firing ms (-1: never), last task id (''), late ms (how long after the earliest
--   time it stands for the last firing ran), missed (firings it skipped: the catch-up rule), runs, created ms,
--   updated ms, by, firings listed (cron), the last listed firing ms (-1: none)}. A
--   record that does not decode comes back with spec '?' and zeros.
-- Complexity: O(S log S) for S schedules (at most 1000 per queue).
-- Flags: no-writes (FCALL_RO / EVALSHA_RO: runs on replicas and for read-only users).
local gate = viewer_gate('schedule_get', [[HGETALL sdefs TIME ZSCORE snext]])
if gate then return gate end
local now = now_ms()
local all = redis.call('HGETALL', K_SDEFS)
local names, recs = {}, {}
for i = 1, #all, 2 do
  names[#names + 1] = all[i]
  recs[all[i]] = all[i + 1]
end
table.sort(names)
local out = {now}
local function num(v)
  if type(v) == 'number' then return v end
  return -1
end
for _, name in ipairs(names) do
  local r = sched_decode(recs[name])
  local nxt = tonumber(redis.call('ZSCORE', K_SNEXT, name)) or -1
  if r then
    local fl = r.fires[#r.fires]
    out[#out + 1] = name
    out[#out + 1] = r.spec
    out[#out + 1] = type(r.tz) == 'string' and r.tz or ''
    out[#out + 1] = r.every
    out[#out + 1] = r.paused and 1 or 0
    out[#out + 1] = nxt
    out[#out + 1] = num(r.last)
    out[#out + 1] = type(r.last_id) == 'string' and r.last_id or ''
    out[#out + 1] = math.max(num(r.late), 0)
    out[#out + 1] = math.max(num(r.missed), 0)
    out[#out + 1] = math.max(num(r.runs), 0)
    out[#out + 1] = num(r.created)
    out[#out + 1] = num(r.updated)
    out[#out + 1] = type(r.by) == 'string' and r.by or ''
    out[#out + 1] = #r.fires
    out[#out + 1] = type(fl) == 'number' and fl or -1
  else
    local row = {name, '?', '', 0, 0, nxt, -1, '', 0, 0, 0, -1, -1, '', 0, -1}
    for _, v in ipairs(row) do out[#out + 1] = v end
  end
end
return out
