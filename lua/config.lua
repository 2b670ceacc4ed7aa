-- config: reads or changes a queue's limits. Recorded in the audit log when changed.
-- KEYS: the eleven queue keys (see lib.lua); writes config, audit.
-- ARGV: [1] who, then pairs of (field, value) to set; none to only read. Fields and
--   ranges: max_delay_ms 1..10 years, max_payload 1..512 MiB, backoff_base_ms
--   1..1 day, backoff_cap_ms 1..30 days, max_attempts 0..1000000 (0 = unlimited),
--   failed_retention 1..100000000, audit_retention 10..10000000, far_future_ms
--   1..10 years, worker_lost_ms 0..1 day (0 = three of each worker's beat intervals),
--   worker_prune_ms 1..30 days; the health verdict's thresholds (read by the inspector
--   and stats, not by scripts): alert_oldest_due_ms 1..10 years, alert_far_future
--   1..1000000000, alert_running_ms 1..10 years, alert_memory_pct 1..100,
--   alert_window_ms 1 min..1 h, alert_fail_pct 1..100, alert_fail_per_min 1..1000000000;
--   time_limit_ms 0..7 days (0 = none: the default time limit of tasks enqueued without
--   one, written into their envelopes by enqueue); done_retention 0..10000000 (finished
--   tasks kept; 0 = none, PROTOCOL.md 4.7); done_retention_ms 0..365 days (finished
--   tasks kept no longer than this; 0 = no age limit; with done_retention 0 it alone
--   turns retention on, up to 10000000 kept).
--   The queue limits (PROTOCOL.md 8.4): rate_limit 0..600000000 tasks a minute (0 =
--   none), rate_burst 0..1000000 tokens (0 = one second's worth), concurrency_limit
--   0..1000000 tasks in flight (0 = none); key_concurrency 0..1000000 (tasks of one
--   key in flight at once; 0 = no limit, PROTOCOL.md 4.10); history_minutes 0..10080
--   (minutes each per-minute rollup is kept; 0 = off, PROTOCOL.md 13).
-- Reply: the effective configuration as pairs {field, value, ...} in a fixed order.
-- Errors: DQ_EINVAL naming the field and its range; nothing is set when any pair is bad.
-- Complexity: O(1), plus O(k log N) for k <= 1000 failures (and k <= 1000 done tasks)
--   trimmed by a lowered retention or age limit (the rest are trimmed by later failures
--   and acks, 1000 at a time).
local RANGE = {max_delay_ms = {1, 315360000000}, max_payload = {1, 536870912},
  backoff_base_ms = {1, 86400000}, backoff_cap_ms = {1, 2592000000},
  max_attempts = {0, DQ_ATTEMPTS_MAX}, failed_retention = {1, 100000000},
  audit_retention = {10, 10000000}, far_future_ms = {1, 315360000000},
  worker_lost_ms = {0, 86400000}, worker_prune_ms = {1, 2592000000},
  alert_oldest_due_ms = {1, 315360000000}, alert_far_future = {1, 1000000000},
  alert_running_ms = {1, 315360000000}, alert_memory_pct = {1, 100},
  alert_window_ms = {60000, 3600000}, alert_fail_pct = {1, 100},
  alert_fail_per_min = {1, 1000000000}, time_limit_ms = {0, DQ_TIME_LIMIT_MAX},
  done_retention = {0, 10000000}, done_retention_ms = {0, 31536000000},
  rate_limit = {0, 600000000}, rate_burst = {0, 1000000}, concurrency_limit = {0, 1000000},
  key_concurrency = {0, 1000000}, history_minutes = {0, 10080}}
if #ARGV % 2 ~= 1 then
  return err('DQ_EINVAL', 'config: %d arguments after who; expected field/value pairs',
    #ARGV - 1)
end
if #ARGV > 1 then
  local gate = operator_gate('config', [[EXISTS group HDEL done failed groups HGET failed HINCRBY
    stats HMGET config HSET config LTRIM hist TIME XADD audit ZCARD doneidx failidx ZCOUNT doneidx
    ZPOPMIN doneidx failidx ZREM group ZSCORE group]])
  if gate then return gate end
end
local set, detail = {}, {}
for i = 2, #ARGV, 2 do
  local f, v = ARGV[i], tonumber(ARGV[i + 1])
  local r = RANGE[f]
  if not r then return err('DQ_EINVAL', 'config: unknown field %q', f) end
  if not v or v ~= math.floor(v) or v < r[1] or v > r[2] then
    return err('DQ_EINVAL', '%s: %q is not in %s..%s', f, ARGV[i + 1], dec(r[1]), dec(r[2]))
  end
  set[#set + 1] = f
  set[#set + 1] = dec(v)
  detail[#detail + 1] = f .. '=' .. dec(v)
end
if #set > 0 then
  redis.call('HSET', K_CONFIG, unpack(set))
  -- a lowered retention applies now (up to 1000 per call; each failure trims more)
  local trimmed = trim_failed(config())
  local c = config_of({'done_retention', 'done_retention_ms'}) -- likewise (PROTOCOL.md 4.7)
  trim_done(c.done_retention, c.done_retention_ms, now_ms())
  audit(config(), ARGV[1], 'config', table.concat(detail, ' '),
    trimmed > 0 and ('ok; trimmed ' .. trimmed .. ' failed tasks') or 'ok')
end
local cfg = config()
local out = {}
for _, f in ipairs(CFG_FIELDS) do
  out[#out + 1] = f
  out[#out + 1] = cfg[f]
end
return out
