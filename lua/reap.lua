-- reap: returns in-flight tasks whose lease passed (their worker died or stalled) to
-- scheduled, due now, with attempt + 1; past max attempts they go to failed as
-- "attempts exhausted".
-- KEYS: the eleven queue keys (see lib.lua); writes inflight, running, sched, ids, stats,
--   failed, failidx.
-- ARGV: [1] limit (1..1000), [2] who (the reaping worker).
-- Reply: {returned, exhausted, earliest lease deadline still running (-1 if none)}.
-- Complexity: O((1 + limit) log N).
-- Flags: allow-oom (runs at maxmemory: moves expired leases back or to failed, adding a fixed
--   error text; docs/OPERATIONS.md).
-- the role gate (PROTOCOL 5.16a): refused before any command below runs
local gate = worker_gate('reap', [[EXISTS group HDEL failed groups kin running stats HEXISTS
  groups HGET failed groups running HINCRBY kin roll stats tally HLEN groups HMGET config
  tally HSET failed groups ids tally LTRIM hist PEXPIREAT roll PUBLISH wake RPUSH hist TIME
  ZADD failidx group kpark sched ZCARD failidx kpark ZPOPMIN failidx kq ZRANGE inflight
  sched ZRANGEBYSCORE inflight ZREM group inflight kpark ZSCORE group]])
if gate then return gate end
allow_oom()
local cfg = config()
local now = now_ms()
local limit = tonumber(ARGV[1])
if not limit or limit < 1 or limit > DQ_CALL_MAX or limit ~= math.floor(limit) then
  return err('DQ_EINVAL', 'limit: %q is not in 1..%d', ARGV[1], DQ_CALL_MAX)
end
local expired = redis.call('ZRANGEBYSCORE', K_INFLIGHT, '-inf', '(' .. dec(now), 'LIMIT', 0,
  limit)
local returned, exhausted = 0, 0
for _, tk in ipairs(expired) do
  local r = redis.call('HGET', K_RUNNING, tk)
  local run = r and run_decode(r)
  local e = run and env_decode(run.m)
  if not e then
    -- Only a foreign write can get here; keep whatever bytes there were.
    to_failed(cfg, undecodable_key(r or tk), r or tk, 'undecodable',
      'running record of ' .. tk .. ' is malformed', '', now, ARGV[2], true)
    exhausted = exhausted + 1
  else
    e.attempt = e.attempt + 1
    e.last_error = 'lease expired (held by ' .. tostring(run.worker) .. ')'
    hist_add(tk, e.attempt, run.claimed, run.worker, 'lease expired', now, e.last_error)
    if (e.max > 0 and e.attempt >= e.max) or e.attempt >= DQ_ATTEMPTS_MAX then
      to_failed(cfg, tk, env_encode(e), 'attempts exhausted', e.last_error, '', now, ARGV[2],
        false)
      exhausted = exhausted + 1
    else
      schedule(e, now)
      returned = returned + 1
    end
  end
  unrun(tk, e and e.k)
end
if returned > 0 then redis.call('HINCRBY', K_STATS, 'reaped', returned) end
-- history (PROTOCOL.md 13): each lost lease, and the retries among them (the rest went to
-- failed: to_failed counted them); no run time, as no worker settled them
roll.add('l', #expired)
roll.add('r', returned)
roll.flush(cfg.history_minutes, now)
local first = redis.call('ZRANGE', K_INFLIGHT, 0, 0, 'WITHSCORES')
return {returned, exhausted, tonumber(first[2]) or -1}
