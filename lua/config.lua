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
--   Partitioned queues (PROTOCOL.md 14; the library prepares the
--   partitions first): partitions 1..256 writes n of the map (parts; never for 1 on a
--   queue without one; and resized 1 once n changes); part.<i> NAME (i 1..255) names
--   partition i unless it has a name (names never change), and every partition 1..n-1
--   must then have one; seq_floor S (on a new partition) seeds its sequence at S when it
--   has none. Writing the map publishes 'parts' on wake, so running workers read it again
--   at once.
-- Reply: the effective configuration as pairs {field, value, ...} in a fixed order,
--   then partitions (n of the map, or 1).
-- Errors: DQ_EINVAL naming the field and its range; nothing is set when any pair is bad.
-- Complexity: O(1) (O(P) for P partition names), plus O(k log N) for k <= 1000 failures
--   (and k <= 1000 done tasks) trimmed by a lowered retention or age limit (the rest are
--   trimmed by later failures and acks, 1000 at a time).
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
    stats HMGET config HSET config parts LTRIM hist TIME XADD audit ZCARD doneidx failidx ZCOUNT
    doneidx ZPOPMIN doneidx failidx ZREM group ZSCORE group HGET parts EXISTS parts seq INCRBY
    seq PUBLISH wake]])
  if gate then return gate end
end
-- HASH n, <i> -> "Q~<i>.<k>": a partitioned queue's map, in partition 0's slot
local K_PARTS = K_PREFIX .. 'parts'
local PARTITIONS_MAX = 256 -- DQ_PARTITIONS_MAX (src/delayq.h)
local set, detail = {}, {}
local parts, pnames, seq_floor
local queue = string.sub(K_PREFIX, 5, #K_PREFIX - 2) -- "dq:{Q}:" -> Q
for i = 2, #ARGV, 2 do
  local f, v = ARGV[i], tonumber(ARGV[i + 1])
  local r = RANGE[f]
  local at = tonumber(string.match(f, '^part%.(%d+)$'))
  if f == 'partitions' then
    r = {1, PARTITIONS_MAX}
  elseif f == 'seq_floor' then
    r = {0, (PARTITIONS_MAX - 1) * 1e13} -- DQ_PART_SEQ_SPAN (src/lib/parts.h)
  elseif at then
    local want = '^' .. string.gsub(queue, '%p', '%%%0') .. '~' .. at .. '%.%d+$'
    if at < 1 or at >= PARTITIONS_MAX or not string.match(ARGV[i + 1], want) then
      return err('DQ_EINVAL', '%s: %q is not a partition name of %s', f, ARGV[i + 1], queue)
    end
    pnames = pnames or {}
    pnames[at] = ARGV[i + 1]
    r, v = {0, 0}, 0
  end
  if not r then return err('DQ_EINVAL', 'config: unknown field %q', f) end
  if not v or v ~= math.floor(v) or v < r[1] or v > r[2] then
    return err('DQ_EINVAL', '%s: %q is not in %s..%s', f, ARGV[i + 1], dec(r[1]), dec(r[2]))
  end
  if f == 'partitions' then
    parts = v
    detail[#detail + 1] = f .. '=' .. dec(v)
  elseif f == 'seq_floor' then
    seq_floor = v
  elseif not at then
    set[#set + 1] = f
    set[#set + 1] = dec(v)
    detail[#detail + 1] = f .. '=' .. dec(v)
  end
end
if parts then
  -- every routed partition has a name, given here or kept from before; checked before
  -- anything is written (nothing half-applies)
  for i = 1, parts - 1 do
    if not (pnames and pnames[i]) and not redis.call('HGET', K_PARTS, i) then
      return err('DQ_EINVAL', 'partitions: partition %d of %s has no name (dq_config_set makes '
        .. 'partitions)', i, queue)
    end
  end
end
if seq_floor and redis.call('EXISTS', K_SEQ) == 0 then
  redis.call('INCRBY', K_SEQ, seq_floor)
end
if parts and (parts > 1 or redis.call('EXISTS', K_PARTS) == 1) then
  -- partitions 1 on a queue that never had more writes nothing: today's keys, exactly
  local w = {'n', dec(parts)}
  -- resized: caller ids may sit outside their partition since (lookups then ask the others)
  local was = tonumber(redis.call('HGET', K_PARTS, 'n'))
  if was and was ~= parts then
    w[#w + 1] = 'resized'
    w[#w + 1] = '1'
  end
  for i, name in pairs(pnames or {}) do
    if not redis.call('HGET', K_PARTS, i) then
      w[#w + 1] = dec(i)
      w[#w + 1] = name
    end
  end
  redis.call('HSET', K_PARTS, unpack(w))
  -- running workers read the map again at once, not at their next claim (a worker of a
  -- queue that had one partition never reads it otherwise: PROTOCOL.md 10.10)
  wake('parts')
end
if #set > 0 or parts then
  if #set > 0 then redis.call('HSET', K_CONFIG, unpack(set)) end
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
out[#out + 1] = 'partitions'
out[#out + 1] = tonumber(redis.call('HGET', K_PARTS, 'n')) or 1
return out
