-- lib.lua: shared prelude, prepended by embed.py to every script in this directory
-- for EVALSHA, and defined once at the top of the function library (it is not a
-- script of its own). One definition of the key layout, the clock, the
-- envelope codec, the failure record, retention and the audit log, so no two
-- scripts can disagree about them. See docs/PROTOCOL.md.
--
-- KEYS (the same eleven keys, in this order, for every script; all share the hash
-- tag {queue}, so a queue lives in one cluster slot):
--   1 sched    ZSET   envelope bytes -> due ms
--   2 ids      HASH   caller-chosen id -> "<due ms>:<seq>" (scheduled tasks with such an
--                     id only)
--   3 inflight ZSET   task key -> lease deadline ms
--   4 running  HASH   task key -> running record
--   5 failed   HASH   task key -> failure record
--   6 failidx  ZSET   task key -> failed ms
--   7 stats    HASH   cumulative counters
--   8 seq      STRING enqueue sequence
--   9 config   HASH   queue limits
--  10 audit    STREAM operator actions
--  11 wake     (a pub/sub channel name, not a key) idle workers subscribe to it
-- keys: begin (embed.py binds these per call in the function library; keep the form
-- "local NAMES = KEYS[i], ...")
-- Three more keys are not passed: they are named from KEYS[1] in this block (workers,
-- beats, pause; docs/PROTOCOL.md section 2).
local K_SCHED, K_IDS, K_INFLIGHT, K_RUNNING = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_FAILED, K_FAILIDX, K_STATS, K_SEQ = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local K_CONFIG, K_AUDIT, K_WAKE = KEYS[9], KEYS[10], KEYS[11]
-- The worker registry and the pause: not in KEYS (every script still takes the same
-- eleven), named from KEYS[1] ("dq:{Q}:sched" -> "dq:{Q}:workers"), so they carry the
-- queue's hash tag and live in its cluster slot like the others.
local K_PREFIX = string.sub(K_SCHED, 1, #K_SCHED - 5)
local K_WORKERS = K_PREFIX .. 'workers' -- HASH worker name -> worker record
local K_BEATS = K_PREFIX .. 'beats' -- ZSET worker name -> server ms of its last beat
local K_PAUSE = K_PREFIX .. 'pause' -- HASH by, since, until (0: until resumed), reason
local K_GROUPS = K_PREFIX .. 'groups' -- HASH group id -> "<first ms> <last ms> <signature>"
local K_GROUP = K_PREFIX .. 'group:' -- prefix: ZSET per group id, task key -> failed ms
local K_TALLY = K_PREFIX .. 'tally' -- HASH outcomes per minute, a ring of 64 (tally())
local K_UNIQ = K_PREFIX .. 'uniq' -- ZSET caller-chosen id -> end ms of its unique-for window
-- Periodic schedules (PROTOCOL.md 2 and 5.30): definitions, envelope templates, next
-- firing per schedule, and the cron schedules whose list of precomputed firings runs low.
local K_SDEFS = K_PREFIX .. 'sdefs' -- HASH name -> schedule record (JSON text)
local K_STPL = K_PREFIX .. 'stpl' -- HASH name -> envelope template of its tasks
local K_SNEXT = K_PREFIX .. 'snext' -- ZSET name -> next firing ms (not paused ones)
local K_SLOW = K_PREFIX .. 'slow' -- ZSET name -> 0: cron lists a worker must top up
-- (while it has members, snext also holds the member '' at score 0: heartbeat's one
-- ZRANGE of snext then tells both the next firing and that a top-up is wanted)
local K_DONE = K_PREFIX .. 'done' -- HASH task key -> done record (done retention)
local K_DONEIDX = K_PREFIX .. 'doneidx' -- ZSET task key -> done ms
-- Per-key limits (PROTOCOL.md 4.10): in-flight counts, the parked tasks of each key, and
-- how many each key has parked (the keys view reads its top without a walk).
local K_KIN = K_PREFIX .. 'kin' -- HASH key -> tasks of that key in flight
local K_KQ = K_PREFIX .. 'kq:' -- prefix: ZSET per key, parked envelope -> due ms
local K_KPARK = K_PREFIX .. 'kpark' -- ZSET key -> its parked tasks (ZCARD of its kq)
-- Queue limits (PROTOCOL.md 8.4): the rate limit's token bucket and the flag that a claim
-- was held back by concurrency; written only while a limit is on.
local K_LIMITS = K_PREFIX .. 'limits' -- HASH tokens, at, rate_held, held (ms each)
-- A partitioned queue's map, K_PREFIX .. 'parts' (PROTOCOL.md 14), is
-- named in config.lua and config_get.lua, which alone read or write it, and in
-- overview.lua and stats.lua, which give its size (HLEN).
-- keys: end

-- Protocol limits (docs/PROTOCOL.md 8.2). src/delayq.h has the same names and numbers;
-- tests/unit/test_limits.c checks that they agree.
local DQ_ID_MAX = 200     -- bytes of a caller-chosen id
local DQ_CALL_MAX = 1000  -- tasks, ids or entries one script call takes or returns
local DQ_STEP_MAX = 1000  -- entries one bounded step looks at (bulk steps, find, search, trim)
local DQ_NEEDLE_MAX = 200 -- bytes of a search needle
-- a task's attempt and max attempts, and a queue's max_attempts: the readers (here and
-- src/lib/env.c) refuse an envelope past it, so the scripts never write one
local DQ_ATTEMPTS_MAX = 1000000
-- a task's time limit (the envelope's "tl" extension), ms: 7 days
local DQ_TIME_LIMIT_MAX = 604800000
-- a task's unique-for window (the envelope's "uf" extension), ms: 7 days
local DQ_UNIQUE_FOR_MAX = 604800000

-- The one clock: Redis server time in integer milliseconds.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The same, with the microseconds past that millisecond (0..999) from the same TIME.
local function now_ms_us()
  local t = redis.call('TIME')
  local us = tonumber(t[2])
  return tonumber(t[1]) * 1000 + math.floor(us / 1000), us % 1000
end

-- Integers as decimal text: tostring() switches to exponent form past 14 digits.
local function dec(n)
  return string.format('%.0f', n)
end

-- Tells idle workers on the wake channel (K_WAKE). Sharded pub/sub (SPUBLISH, Redis
-- 7): in a cluster the message stays on the node of the queue's slot, where workers
-- SSUBSCRIBE, instead of being broadcast to every node. A server without SPUBLISH
-- (Redis 6, on the EVALSHA path) gets PUBLISH, and its workers SUBSCRIBE.
local function wake(msg)
  local r = redis.pcall('SPUBLISH', K_WAKE, msg)
  if type(r) == 'table' and r.err then redis.call('PUBLISH', K_WAKE, msg) end
end

-- Draining at maxmemory (docs/OPERATIONS.md, "Redis out of memory"). The scripts that
-- free or move data carry "-- Flags: allow-oom" (the function library registers them
-- with that flag) and call this first, after their role gate: under EVALSHA, which has
-- no flags without a shebang (and Redis 6 no shebang), Redis refuses a deny-oom command
-- at maxmemory only while the script has written nothing yet, so a write that is not
-- deny-oom and changes nothing (HDEL of a field no stats hash has) lets the script's
-- later writes through, as the flag does. It is not replicated: it changes nothing.
-- The function library (embed.py) replaces it with a no-op: the flag is enough there.
local function allow_oom()
  redis.call('HDEL', K_STATS, '')
end

local function err(code, fmt, ...)
  return redis.error_reply(code .. ' ' .. string.format(fmt, ...))
end

-- Queue configuration: defaults unless the config hash says otherwise.
local CFG_FIELDS = {'max_delay_ms', 'max_payload', 'backoff_base_ms', 'backoff_cap_ms',
  'max_attempts', 'failed_retention', 'audit_retention', 'far_future_ms', 'worker_lost_ms',
  'worker_prune_ms', 'alert_oldest_due_ms', 'alert_far_future', 'alert_running_ms',
  'alert_memory_pct', 'alert_window_ms', 'alert_fail_pct', 'alert_fail_per_min',
  'time_limit_ms', 'done_retention', 'done_retention_ms', 'rate_limit', 'rate_burst',
  'concurrency_limit', 'key_concurrency', 'history_minutes'}
-- worker_lost_ms 0: a worker is lost after three of its own beat intervals.
local CFG_DEFAULT = {max_delay_ms = 7 * 86400000, max_payload = 1048576,
  backoff_base_ms = 1000, backoff_cap_ms = 300000, max_attempts = 25,
  failed_retention = 100000, audit_retention = 10000, far_future_ms = 3600000,
  worker_lost_ms = 0, worker_prune_ms = 3600000, alert_oldest_due_ms = 300000,
  alert_far_future = 100000, alert_running_ms = 300000, alert_memory_pct = 90,
  alert_window_ms = 300000, alert_fail_pct = 50, alert_fail_per_min = 60, time_limit_ms = 0,
  done_retention = 0, done_retention_ms = 0, rate_limit = 0, rate_burst = 0,
  concurrency_limit = 0, key_concurrency = 0, history_minutes = 1440, throttle_rate = 0,
  throttle_concurrency = 0, throttle_until = -1}
-- Only @fields (a hot path reads the few it needs).
local function config_of(fields)
  local v = redis.call('HMGET', K_CONFIG, unpack(fields))
  local c = {}
  for i, f in ipairs(fields) do
    c[f] = tonumber(v[i]) or CFG_DEFAULT[f]
  end
  return c
end
-- All of them, and the live throttle (throttle.lua; PROTOCOL.md 8.4), kept in the config
-- hash so that claim's one HMGET reads it too; config does not list it.
local config
do
local CFG_READ = {'throttle_rate', 'throttle_concurrency', 'throttle_until'}
for i = 1, #CFG_FIELDS do CFG_READ[i + 3] = CFG_FIELDS[i] end
function config()
  return config_of(CFG_READ)
end
end

-- Outcomes per minute of server time, for the verdict's window (stats.lua): a ring of
-- 64 slots in one hash, slot = minute % 64, fields m<slot> (the minute it holds), then
-- d<slot> done, f<slot> failed, r<slot> retried. Bounded (256 fields), written once per
-- call (not per task), and a slot is reset when its minute comes round again.
-- A slot also keeps y<slot>, the queue's history_minutes read when the slot was reset:
-- tally returns it, so ack learns whether the rollups are on (roll below) at most once a
-- minute, from the HMGET it makes anyway, and never reads the config otherwise.
local function tally(kind, n, now)
  local m = math.floor(now / 60000)
  local s = m % 64
  local mf, yf = 'm' .. s, 'y' .. s
  local v = redis.call('HMGET', K_TALLY, mf, yf)
  local hm = tonumber(v[2])
  if v[1] ~= dec(m) or not hm then
    hm = config_of({'history_minutes'}).history_minutes
    if v[1] ~= dec(m) then
      redis.call('HSET', K_TALLY, mf, dec(m), 'd' .. s, 0, 'f' .. s, 0, 'r' .. s, 0, yf, dec(hm))
    else
      redis.call('HSET', K_TALLY, yf, dec(hm))
    end
  end
  redis.call('HINCRBY', K_TALLY, kind .. s, n)
  return hm
end
-- The outcomes of the last @n minutes up to @now (n <= 64), in one HMGET: three tables
-- done, failed, retried indexed 0 (this minute) .. n - 1; a slot the ring reused for a
-- later minute, or never wrote, counts 0.
local function tally_read(now, n)
  local m, fields = math.floor(now / 60000), {}
  for i = 0, n - 1 do
    local s = (m - i) % 64
    fields[#fields + 1] = 'm' .. s
    fields[#fields + 1] = 'd' .. s
    fields[#fields + 1] = 'f' .. s
    fields[#fields + 1] = 'r' .. s
  end
  local v = redis.call('HMGET', K_TALLY, unpack(fields))
  local done, failed, retried = {}, {}, {}
  for i = 0, n - 1 do
    local fresh = v[4 * i + 1] == dec(m - i)
    done[i] = fresh and (tonumber(v[4 * i + 2]) or 0) or 0
    failed[i] = fresh and (tonumber(v[4 * i + 3]) or 0) or 0
    retried[i] = fresh and (tonumber(v[4 * i + 4]) or 0) or 0
  end
  return done, failed, retried
end
-- History: per-minute rollups (PROTOCOL.md 11); one table of functions, filled in by the
-- rollups block below (after next_due, which it uses), so the helpers above it can count.
local roll = {}

-- msgpack writers. The envelope is written here, not with cmsgpack, because its
-- sequence must always take the fixed 9-byte form (so that the byte order of members
-- is the enqueue order) and its payload must stay a bin.
-- codec: the msgpack writers and readers; p_bin, the v2 prefixes, the field readers and
-- the kinds tables are this block's own
local p_u64, p_uint, p_str, env_encode, rd, rd_record, env_decode
local env_peek, env_template, env_fill, tkey, tkey_id, resolve, truncate
local run_encode, run_decode, fail_encode, fail_decode, undecodable_key
-- bytes of a task's key (the envelope's "k" extension, per-key limits: PROTOCOL.md 4.10):
-- the readers check it, and so does a bulk step's key filter (filter_set)
local DQ_KEY_MAX = 64
do
function p_u64(n)
  local hi = math.floor(n / 4294967296)
  return '\207' .. struct.pack('>I4I4', hi, n - hi * 4294967296)
end
function p_uint(n)
  if n < 128 then return string.char(n)
  elseif n < 256 then return '\204' .. string.char(n)
  elseif n < 65536 then return '\205' .. struct.pack('>I2', n)
  elseif n < 4294967296 then return '\206' .. struct.pack('>I4', n)
  end
  return p_u64(n)
end
function p_str(s)
  local n = #s
  if n < 32 then return string.char(160 + n) .. s
  elseif n < 256 then return '\217' .. string.char(n) .. s
  elseif n < 65536 then return '\218' .. struct.pack('>I2', n) .. s
  end
  return '\219' .. struct.pack('>I4', n) .. s
end
local function p_bin(s)
  local n = #s
  if n < 256 then return '\196' .. string.char(n) .. s
  elseif n < 65536 then return '\197' .. struct.pack('>I2', n) .. s
  end
  return '\198' .. struct.pack('>I4', n) .. s
end
local function p_opt_uint(n)
  if n then return p_uint(n) end
  return '\192'
end
local function p_opt_str(s)
  if s then return p_str(s) end
  return '\192'
end

-- Envelope v1: fixarray(9) [1, seq u64, id|nil, attempt, enqueued ms, max attempts
-- (0 = unlimited), deadline ms|nil, payload bin, last error|nil]. v2: fixarray(10), the
-- same nine with version 2, then a map of extensions (rd_ext), e.ext its bytes as read:
-- written back unchanged, so a rewrite keeps extensions this code does not know.
local ENV_PREFIX = '\153\001\207'
local ENV2_PREFIX = '\154\002\207'
function env_encode(e)
  local body = p_u64(e.seq) .. p_opt_str(e.id) .. p_uint(e.attempt) ..
    p_uint(e.enq) .. p_uint(e.max) .. p_opt_uint(e.deadline) .. p_bin(e.payload) ..
    p_opt_str(e.last_error)
  if e.ext then return '\154\002' .. body .. e.ext end
  return '\153\001' .. body
end

-- A minimal msgpack reader for the records this file writes (Redis' cmsgpack does not
-- read bin). rd(s, pos) returns value, next position, kind ('nil', 'bool', 'uint',
-- 'bytes', 'array' with the value as its length); or nil when the bytes there are
-- not one of these forms or run past the end.
function rd(s, pos)
  local b = string.byte(s, pos)
  if not b then return nil end
  local n = #s
  if b < 128 then return b, pos + 1, 'uint' end
  if b >= 160 and b < 192 then
    local l = b - 160
    if pos + l > n then return nil end
    return string.sub(s, pos + 1, pos + l), pos + 1 + l, 'bytes'
  end
  if b >= 144 and b < 160 then return b - 144, pos + 1, 'array' end
  if b == 192 then return false, pos + 1, 'nil' end
  if b == 194 or b == 195 then return b == 195, pos + 1, 'bool' end
  if b == 204 and pos + 1 <= n then return string.byte(s, pos + 1), pos + 2, 'uint' end
  if b == 205 and pos + 2 <= n then return struct.unpack('>I2', s, pos + 1), pos + 3, 'uint' end
  if b == 206 and pos + 4 <= n then return struct.unpack('>I4', s, pos + 1), pos + 5, 'uint' end
  if b == 207 and pos + 8 <= n then
    local hi, lo = struct.unpack('>I4I4', s, pos + 1)
    if hi >= 2097152 then return nil end -- beyond 2^53: not exact in a Lua number
    return hi * 4294967296 + lo, pos + 9, 'uint'
  end
  local l, h
  if (b == 196 or b == 217) and pos + 1 <= n then l, h = string.byte(s, pos + 1), 2
  elseif (b == 197 or b == 218) and pos + 2 <= n then l, h = struct.unpack('>I2', s, pos + 1), 3
  elseif (b == 198 or b == 219) and pos + 4 <= n then l, h = struct.unpack('>I4', s, pos + 1), 5
  else return nil end
  if pos + h - 1 + l > n then return nil end
  return string.sub(s, pos + h, pos + h - 1 + l), pos + h + l, 'bytes'
end

-- Reads the first #kinds elements of a fixarray of @arity elements whose kinds match
-- @kinds ('uint', 'bytes', 'bool', or '?uint' / '?bytes' where nil is allowed).
-- Returns the values as a table (nil elements as false) and the position after them,
-- or nil.
local function rd_fields(s, arity, kinds)
  local len, pos, kind = rd(s, 1)
  if kind ~= 'array' or len ~= arity then return nil end
  local t = {}
  for i = 1, #kinds do
    local v, k
    v, pos, k = rd(s, pos)
    if not pos then return nil end
    local want = kinds[i]
    if string.sub(want, 1, 1) == '?' then
      if k == 'nil' then k = string.sub(want, 2) end
      want = string.sub(want, 2)
    end
    if k ~= want then return nil end
    t[i] = v
  end
  return t, pos
end

-- rd_fields over a whole record: exactly #kinds elements that fill @s exactly.
function rd_record(s, kinds)
  local t, pos = rd_fields(s, #kinds, kinds)
  if not t or pos ~= #s + 1 then return nil end
  return t
end

-- The extensions of a v2 envelope (docs/PROTOCOL.md 4.1), from @pos to the end of @s:
-- a fixmap of 1..15 entries, keys fixstr of [a-z0-9_] in strictly increasing order,
-- values a uint or a string. Returns a table of the known ones (k: the task's key, tl:
-- the time limit, uf: the unique-for window), or nil when the map is malformed. Unknown keys are
-- allowed (a later writer's).
local function rd_ext(s, pos)
  local b = string.byte(s, pos)
  if not b or b < 129 or b > 143 then return nil end
  local x, prev = {}, nil
  pos = pos + 1
  for _ = 1, b - 128 do
    local kb = string.byte(s, pos)
    if not kb or kb < 161 or kb > 191 then return nil end
    local key, v, k
    key, pos = rd(s, pos)
    if not pos or not string.match(key, '^[a-z0-9_]+$') or (prev and prev >= key) then
      return nil
    end
    prev = key
    v, pos, k = rd(s, pos)
    if k ~= 'uint' and k ~= 'bytes' then return nil end
    if key == 'k' then
      if k ~= 'bytes' or #v < 1 or #v > DQ_KEY_MAX then return nil end
      x.k = v
    elseif key == 'tl' then
      if k ~= 'uint' or v < 1 or v > DQ_TIME_LIMIT_MAX then return nil end
      x.tl = v
    elseif key == 'uf' then
      if k ~= 'uint' or v < 1 or v > DQ_UNIQUE_FOR_MAX then return nil end
      x.uf = v
    end
  end
  if pos ~= #s + 1 then return nil end
  return x
end

local function opt(v)
  if v == false then return nil end
  return v
end

local ENV_KINDS = {'uint', 'uint', '?bytes', 'uint', 'uint', 'uint', '?uint', 'bytes', '?bytes'}
-- Returns the envelope as a table, or nil when @m is not a well-formed v1 or v2
-- envelope.
function env_decode(m)
  local head, t, ext, x = string.sub(m, 1, 3), nil, nil, nil
  if head == ENV_PREFIX then
    t = rd_record(m, ENV_KINDS)
  elseif head == ENV2_PREFIX then
    local pos
    t, pos = rd_fields(m, 10, ENV_KINDS)
    x = t and rd_ext(m, pos)
    if not x then return nil end
    ext = string.sub(m, pos)
  end
  if not t or (t[3] and (#t[3] == 0 or #t[3] > DQ_ID_MAX)) then return nil end
  if t[4] > DQ_ATTEMPTS_MAX or t[6] > DQ_ATTEMPTS_MAX then return nil end
  return {seq = t[2], id = opt(t[3]), attempt = t[4], enq = t[5], max = t[6],
    deadline = opt(t[7]), payload = t[8], last_error = opt(t[9]), ext = ext,
    tl = x and x.tl, uf = x and x.uf, k = x and x.k}
end

-- The position after the str or bin at @pos, without copying it (as rd reads it); nil
-- when there is none there or it runs past the end.
local function skip_bytes(s, pos)
  local b, n = string.byte(s, pos), #s
  local l, h
  if not b then return nil end
  if b >= 160 and b < 192 then l, h = b - 160, 1
  elseif (b == 196 or b == 217) and pos + 1 <= n then l, h = string.byte(s, pos + 1), 2
  elseif (b == 197 or b == 218) and pos + 2 <= n then l, h = struct.unpack('>I2', s, pos + 1), 3
  elseif (b == 198 or b == 219) and pos + 4 <= n then l, h = struct.unpack('>I4', s, pos + 1), 5
  else return nil end
  if pos + h - 1 + l > n then return nil end
  return pos + h + l
end

-- The position after the uint at @q of @m (@n its length) and its value; nil when there
-- is none there (rd's uint forms, without its kind).
local function uint_at(m, q, n)
  local b = string.byte(m, q)
  if not b then return nil end
  if b < 128 then return q + 1, b end
  if b == 204 and q + 1 <= n then return q + 2, string.byte(m, q + 1) end
  if b == 205 and q + 2 <= n then return q + 3, struct.unpack('>I2', m, q + 1) end
  if b == 206 and q + 4 <= n then return q + 5, struct.unpack('>I4', m, q + 1) end
  if b == 207 and q + 8 <= n then
    local hi, lo = struct.unpack('>I4I4', m, q + 1)
    if hi >= 2097152 then return nil end -- beyond 2^53: not exact in a Lua number
    return q + 9, hi * 4294967296 + lo
  end
  return nil
end

-- What claim needs of a due member, for every task it claims: the task key, the
-- caller-chosen id (or nil), the deadline (or nil) and the task's key ("k", or nil). It
-- accepts exactly what env_decode accepts (tests/integ/test_queue.c compares them),
-- walking the fields in place: no tables but the extensions', and the payload and last
-- error are not copied. nil when @m is not a well-formed v1 or v2 envelope. With @keyonly
-- (claim's per-key admission, parking a full key's members) the task key is true and
-- the id not made (nor copied): only the deadline and the key are.
function env_peek(m, keyonly)
  local b1, b2, b3 = string.byte(m, 1, 3)
  local n = #m
  if b3 ~= 207 or not ((b1 == 154 and b2 == 2) or (b1 == 153 and b2 == 1)) then return nil end
  local q, seq = uint_at(m, 3, n)
  if not q then return nil end
  local id, dl, v
  if string.byte(m, q) == 192 then
    q = q + 1
  else
    local e = skip_bytes(m, q)
    if not e then return nil end
    local b, h = string.byte(m, q), 1 -- the id's header: its length is what follows it
    if b == 196 or b == 217 then h = 2 elseif b == 197 or b == 218 then h = 3
    elseif b == 198 or b == 219 then h = 5 end
    if e - q - h < 1 or e - q - h > DQ_ID_MAX then return nil end
    if not keyonly then id = string.sub(m, q + h, e - 1) end
    q = e
  end
  q, v = uint_at(m, q, n) -- attempt
  if not q or v > DQ_ATTEMPTS_MAX then return nil end
  q = uint_at(m, q, n) -- enqueued
  if not q then return nil end
  q, v = uint_at(m, q, n) -- max attempts
  if not q or v > DQ_ATTEMPTS_MAX then return nil end
  if string.byte(m, q) == 192 then
    q = q + 1
  else
    q, dl = uint_at(m, q, n) -- deadline
    if not q then return nil end
  end
  q = skip_bytes(m, q) -- payload
  if not q then return nil end
  if string.byte(m, q) == 192 then
    q = q + 1
  else
    q = skip_bytes(m, q) -- last error
    if not q then return nil end
  end
  local k
  if b1 == 154 then
    -- the common map, {k = key} alone (81 a1 6b, then the key as a str or bin with a
    -- one-byte header or length): read in place, as rd_ext reads it; any other map by it
    local h, l = string.byte(m, q + 3), nil
    if string.byte(m, q) == 129 and string.byte(m, q + 1) == 161 and
        string.byte(m, q + 2) == 107 and h then
      if h >= 161 and h <= 191 then
        l, h = h - 160, 4
      elseif h == 217 or h == 196 then
        l, h = string.byte(m, q + 4), 5
      end
    end
    if l and l >= 1 and l <= DQ_KEY_MAX and q + h + l == n + 1 then
      k = string.sub(m, q + h, n)
    else
      local x = rd_ext(m, q)
      if not x then return nil end
      k = x.k
    end
  elseif q ~= n + 1 then
    return nil
  end
  if keyonly then return true, nil, dl, k end
  if id then return 'c:' .. id, id, dl, k end
  return dec(seq), nil, dl, k
end

-- An envelope template as enqueue.lua takes it (docs/PROTOCOL.md 5.2): a v1 envelope
-- with seq and enqueued as cf + 8 placeholder bytes, attempt 0, max attempts nil (the
-- queue's default) or a uint, deadline nil or cf + 8 bytes of ms after the due time,
-- a bin payload and a nil last error; or the same as v2, with its extensions after
-- the last error. Its layout is checked by position, without copying the payload.
-- Returns a table of the positions env_fill needs, or nil and why.
function env_template(m, id)
  local head = string.sub(m, 1, 3)
  if head ~= ENV_PREFIX and head ~= ENV2_PREFIX then
    return nil, 'does not start with 99 01 cf or 9a 02 cf'
  end
  local p = 12 -- the id field
  if id == '' then
    if string.byte(m, p) ~= 192 then return nil, 'id field is not nil for a generated id' end
    p = p + 1
  else
    local f = p_str(id)
    if string.sub(m, p, p + #f - 1) ~= f then return nil, 'id field does not hold the id' end
    p = p + #f
  end
  if string.byte(m, p) ~= 0 or string.byte(m, p + 1) ~= 207 then
    return nil, 'attempt is not 0 or enqueued is not cf + 8 bytes'
  end
  local t = {m = m, attempt_at = p, max_at = p + 10}
  local mx, q, kind = rd(m, t.max_at)
  if kind ~= 'nil' and kind ~= 'uint' then return nil, 'max attempts is not a uint or nil' end
  if kind == 'uint' and mx > DQ_ATTEMPTS_MAX then
    return nil, string.format('max attempts %s is over the limit of %d', dec(mx),
      DQ_ATTEMPTS_MAX)
  end
  t.max_default, t.dl_at = kind == 'nil', q
  local dl, q2, k2 = rd(m, q)
  if k2 == 'uint' and string.byte(m, q) == 207 then
    t.dl = dl
  elseif k2 ~= 'nil' then
    return nil, 'deadline is not nil or cf + 8 bytes'
  end
  local b, l, h = string.byte(m, q2), nil, nil
  if b == 196 and q2 + 1 <= #m then l, h = string.byte(m, q2 + 1), 2
  elseif b == 197 and q2 + 2 <= #m then l, h = struct.unpack('>I2', m, q2 + 1), 3
  elseif b == 198 and q2 + 4 <= #m then l, h = struct.unpack('>I4', m, q2 + 1), 5
  else return nil, 'payload is not a bin' end
  local le = q2 + h + l -- the last error
  if string.byte(m, le) ~= 192 then
    return nil, 'payload length does not match, or last error is not nil'
  end
  if head == ENV_PREFIX and le ~= #m then return nil, 'trailing bytes after the last error' end
  if head == ENV2_PREFIX and not rd_ext(m, le + 1) then
    return nil, 'extensions are not a well-formed map (PROTOCOL.md 4.1)'
  end
  t.head, t.payload_at, t.payload_len = string.sub(m, 1, 2), q2, l
  return t
end

-- The member for template @t: seq, enqueued (@now8, p_u64 of the call's now), max
-- attempts (@default_max, already packed, when the template left it to the queue) and
-- the deadline (t.due + the template's ms) filled in; @default_ext (nil: none) is the
-- queue's default time limit as an extension map, for a v1 template. One concatenation.
function env_fill(t, seq, now8, default_max, default_ext)
  local m = t.m
  local maxf = t.max_default and default_max or string.sub(m, t.max_at, t.dl_at - 1)
  local dlf = t.dl and p_u64(t.due + t.dl) or '\192'
  if default_ext and t.head == '\153\001' then
    -- the queue's default time limit, for a template without extensions: v2 with {tl}
    return '\154\002' .. p_u64(seq) .. string.sub(m, 12, t.attempt_at) .. now8 .. maxf ..
      dlf .. string.sub(m, t.payload_at) .. default_ext
  end
  return t.head .. p_u64(seq) .. string.sub(m, 12, t.attempt_at) .. now8 .. maxf ..
    dlf .. string.sub(m, t.payload_at)
end

-- Task keys name a task in the in-flight, running and failed structures. Generated
-- ids are the sequence in decimal; caller-chosen ids (never all digits: enqueue refuses
-- those) get a "c:" prefix.
function tkey(e)
  if e.id then return 'c:' .. e.id end
  return dec(e.seq)
end
function tkey_id(tk)
  if string.sub(tk, 1, 2) == 'c:' then return string.sub(tk, 3) end
  return tk
end
-- The task key under which user-facing @id exists in HASH @h, or nil.
function resolve(h, id)
  if string.match(id, '^%d+$') then
    if redis.call('HEXISTS', h, id) == 1 then return id end
    return nil
  end
  if redis.call('HEXISTS', h, 'c:' .. id) == 1 then return 'c:' .. id end
  if string.sub(id, 1, 12) == 'undecodable:' and redis.call('HEXISTS', h, id) == 1 then
    return id
  end
  return nil
end

function truncate(s, n)
  if s and #s > n then return string.sub(s, 1, n) end
  return s
end

-- Running record: fixarray(4) [envelope bin, worker str, claimed ms, due ms].
-- @mid, when given, is p_str(worker) .. p_uint(claimed), made once for a batch.
function run_encode(m, worker, claimed, due, mid)
  return '\148' .. p_bin(m) .. (mid or p_str(worker) .. p_uint(claimed)) .. p_uint(due)
end
local RUN_KINDS = {'bytes', 'bytes', 'uint', 'uint'}
function run_decode(r)
  local t = rd_record(r, RUN_KINDS)
  if not t then return nil end
  return {m = t[1], worker = t[2], claimed = t[3], due = t[4]}
end

-- Failure record: fixarray(8) [1, raw member bin, reason, error, trace, failed ms, who,
-- undecodable bool].
function fail_encode(raw, reason, msg, trace, at, who, undecodable)
  return '\152\001' .. p_bin(raw) .. p_str(reason) .. p_str(msg) .. p_str(trace) ..
    p_uint(at) .. p_str(who) .. (undecodable and '\195' or '\194')
end
local FAIL_KINDS = {'uint', 'bytes', 'bytes', 'bytes', 'bytes', 'uint', 'bytes', 'bool'}
function fail_decode(r)
  local t = rd_record(r, FAIL_KINDS)
  if not t then return nil end
  return {raw = t[2], reason = t[3], msg = t[4], trace = t[5], at = t[6], who = t[7],
    undecodable = t[8]}
end

function undecodable_key(m)
  return 'undecodable:' .. redis.sha1hex(m)
end
end -- codec

-- Attempt history (docs/PROTOCOL.md 4.5): the last DQ_HISTORY_MAX attempts of a task that has
-- failed at least once, oldest first, in a LIST of its own, dq:{Q}:hist:<task key> (named
-- from KEYS[1] like the registry keys, so it shares the queue's slot). A fresh task has
-- none: the key is created by its first failed attempt and deleted when the task leaves
-- the queue (ack, drop, trim). A requeue keeps it, so the history survives a requeue.
local DQ_HISTORY_MAX = 5          -- attempts kept per task
local DQ_HISTORY_ERROR_MAX = 1024 -- bytes of each attempt's error kept
local function hist_key(tk)
  return K_PREFIX .. 'hist:' .. tk
end

-- Entry: fixarray(7) [1, attempt (counted from 1), started ms (the claim), worker,
-- outcome, duration ms, error]. @outcome is 'retry', 'fail', 'lease expired', 'timed out'
-- or 'expired'; a retry or fail whose message starts with "timed out" (delayq work's
-- timeout, and any consumer that says so) is recorded as 'timed out'.
-- The one encoder of an entry (hist_add, and import.lua for exported histories); @d is
-- the duration ms, @msg at most DQ_HISTORY_ERROR_MAX bytes.
local DQ_HISTORY_OUTCOMES = {['retry'] = true, ['fail'] = true, ['lease expired'] = true,
  ['timed out'] = true, ['expired'] = true}
local function hist_encode(attempt, started, worker, outcome, d, msg)
  return '\151\001' .. p_uint(attempt) .. p_uint(started) .. p_str(worker) .. p_str(outcome) ..
    p_uint(d) .. p_str(msg)
end
local function hist_add(tk, attempt, started, worker, outcome, now, msg)
  msg = msg or ''
  if (outcome == 'retry' or outcome == 'fail') and string.sub(msg, 1, 9) == 'timed out' then
    outcome = 'timed out'
  end
  local d = now - started
  if d < 0 then d = 0 end
  local k = hist_key(tk)
  redis.call('RPUSH', k, hist_encode(attempt, started, worker, outcome, d,
    truncate(msg, DQ_HISTORY_ERROR_MAX)))
  redis.call('LTRIM', k, -DQ_HISTORY_MAX, -1)
end

-- The attempt that running record @run (decoded, with envelope @e as claimed) ended.
local function hist_run(tk, run, e, outcome, now, msg)
  hist_add(tk, e.attempt + 1, run.claimed, run.worker, outcome, now, msg)
end

-- The task keys @t[from], @t[from + step], ... leave the queue: their histories go too
-- (undecodable failures never have one).
-- LTRIM to an empty range deletes a list: workers reach this (ack, the retention trim in
-- to_failed) and hold no DEL, which could delete any queue key (docs/SECURITY.md).
local function hist_forget_keys(t, from, step)
  for i = from, #t, step do
    if string.sub(t[i], 1, 12) ~= 'undecodable:' then
      redis.call('LTRIM', hist_key(t[i]), 1, 0)
    end
  end
end
local function hist_forget(tk)
  hist_forget_keys({tk}, 1, 1)
end

-- The position after the msgpack value at @p of @s, for the forms an envelope uses, or
-- nil. Reads headers only: the payload is skipped, not copied.
local function hist_skip(s, p)
  local b, n = string.byte(s, p), #s
  if not b then return nil end
  if b < 128 or b == 192 then return p + 1 end
  if b >= 160 and b < 192 then return p + 1 + b - 160 end
  if b == 204 then return p + 2 elseif b == 205 then return p + 3 end
  if b == 206 then return p + 5 elseif b == 207 then return p + 9 end
  if (b == 196 or b == 217) and p + 1 <= n then return p + 2 + string.byte(s, p + 1) end
  if (b == 197 or b == 218) and p + 2 <= n then return p + 3 + struct.unpack('>I2', s, p + 1) end
  if (b == 198 or b == 219) and p + 4 <= n then return p + 5 + struct.unpack('>I4', s, p + 1) end
  return nil
end

-- Whether the envelope starting at @p of @s may have a history: it was attempted
-- (attempt > 0) or carries a last error (a requeued task keeps or gets one,
-- hist_requeued). A fresh task has neither, so its ack deletes nothing.
local function hist_marked(s, p)
  local q = hist_skip(s, p + 11) -- past version and seq: the id
  local a = q and rd(s, q)
  if a ~= 0 then return true end
  for _ = 1, 5 do -- attempt, enqueued, max attempts, deadline, payload
    q = q and hist_skip(s, q)
  end
  return not q or string.byte(s, q) ~= 192
end

-- ack of task key @tk with running record @r: its history goes, if it may have one.
local function hist_acked(tk, r)
  local b, p = string.byte(r, 2), nil
  if b == 196 then p = 4 elseif b == 197 then p = 5 elseif b == 198 then p = 7 end
  if not p or hist_marked(r, p) then hist_forget(tk) end
end

-- Scheduled member @m is dropped: its history goes, if it may have one.
local function hist_dropped(m)
  local e = m and env_decode(m)
  if e and hist_marked(m, 1) then hist_forget(tkey(e)) end
end

-- A requeue resets the attempt: the last error (kept, or the failure's message when the
-- task had none) marks the envelope as one whose history must go with it (hist_marked).
local function hist_requeued(e, rec)
  if not e.last_error then e.last_error = truncate(rec.msg, 512) end
end

-- The history of task key @tk, oldest first (find).
local function hist_get(tk)
  return redis.call('LRANGE', hist_key(tk), 0, -1)
end
-- Error groups (docs/PROTOCOL.md 4.6). Every failure belongs to exactly one group, named
-- by its signature: the reason and the first line of the error with its variable parts
-- masked. Each group has a ZSET of its task keys by failed time (K_GROUP .. id), so its
-- count is a ZCARD and it can be paged and bulk-moved without a walk of the failed set;
-- K_GROUPS holds first and last seen and the signature. Every path into the failed set
-- (to_failed) and out of it (requeue, drop, trim_failed) keeps both, so the counts are
-- exact. Past DQ_GROUPS_MAX groups a new signature joins the group 'other'.
-- groups: the masking, group ids, the match memo, the step budget, fail_key and group_enter
-- are this block's own
local GROUP_OTHER, clock_us, over_budget, signature, group_find, group_add
local group_forget, group_remove, filter_set, text_needle, text_find, filter_hit, filter_text
local trim_failed, to_failed
do
local DQ_GROUPS_MAX = 500   -- groups per queue, besides 'other'
local DQ_SIGNATURE_MAX = 200 -- bytes of a signature
local SIG_LINE_MAX = 512 -- bytes of the error's first line looked at (bounds the masking)
GROUP_OTHER = 'other'
-- Redis time one step of a filtered requeue or drop may take before it stops early (and
-- resumes at its cursor on the next call): keeps Redis responsive however loaded the host.
local BULK_BUDGET_US = 2000

-- Server time in microseconds (for the budget of a bulk step).
function clock_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Whether a bulk step begun at @t0 (clock_us) has used its budget; looked at every 4th
-- task (@n looked at so far) so the clock costs little.
function over_budget(t0, n)
  return n % 4 == 0 and n > 0 and clock_us() - t0 > BULK_BUDGET_US
end

-- Masks the variable parts of one line, in this order (PROTOCOL.md 4.5 lists the same).
local function sig_mask(s)
  s = ' ' .. s .. ' '
  s = string.gsub(s, '"[^"]*"', '"*"')
  s = string.gsub(s, "([^%w])'[^']*'", "%1'*'")
  s = string.gsub(s, '`[^`]*`', '`*`')
  s = string.gsub(s, '[%w._%%+%-]+@[%w%-]+%.[%w.%-]+', '<email>')
  s = string.gsub(s, '%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x',
    '<uuid>')
  s = string.gsub(s, '(%S*/)[^%s/]+', '%1*')
  s = string.gsub(s, '0[xX]%x+', '#')
  s = string.gsub(s, '%f[%w]%x+%f[%W]', function(h)
    if #h >= 8 and string.find(h, '%d') then return '#' end
  end)
  s = string.gsub(s, '%d+', '#')
  s = string.gsub(s, '#[.,]#', '#')
  s = string.gsub(s, '#[.,]#', '#')
  s = string.gsub(s, '%s+', ' ')
  return string.match(s, '^ ?(.-) ?$')
end

-- The signature of a failure with @reason and error @msg.
function signature(reason, msg)
  local line = string.sub(string.match(msg or '', '^[^\r\n]*'), 1, SIG_LINE_MAX)
  return truncate(reason .. ': ' .. sig_mask(line), DQ_SIGNATURE_MAX)
end

-- The 16-hex-digit group id of signature @sig ('other' is never one: it is not hex).
local function group_id(sig)
  return string.sub(redis.sha1hex(sig), 1, 16)
end

-- The group an operator names: a group id as `delayq errors` prints it, or a signature.
-- Returns the id, or nil when no such group exists now.
function group_find(v)
  if redis.call('HEXISTS', K_GROUPS, v) == 1 then return v end
  local h = group_id(v)
  if redis.call('HEXISTS', K_GROUPS, h) == 1 then return h end
  return nil
end

-- Task key @tk (failure record fields @reason, @msg) failed at @at: into its group.
function group_add(tk, reason, msg, at)
  local sig = signature(reason, msg)
  local h = group_id(sig)
  local r = redis.call('HGET', K_GROUPS, h)
  if not r and redis.call('HLEN', K_GROUPS) - redis.call('HEXISTS', K_GROUPS, GROUP_OTHER) >=
      DQ_GROUPS_MAX then
    h, sig = GROUP_OTHER, '(other signatures, past ' .. DQ_GROUPS_MAX .. ' groups)'
    r = redis.call('HGET', K_GROUPS, h)
  end
  local first, last = dec(at), at
  if r then
    local f, l = string.match(r, '^(%d+) (%d+) ')
    if f then first, last = f, math.max(tonumber(l), at) end
  end
  redis.call('HSET', K_GROUPS, h, first .. ' ' .. dec(last) .. ' ' .. sig)
  redis.call('ZADD', K_GROUP .. h, dec(at), tk)
end

-- Task keys @tks left group @h: an emptied group is deleted.
function group_forget(h, tks)
  if #tks == 0 then return end
  redis.call('ZREM', K_GROUP .. h, unpack(tks))
  if redis.call('EXISTS', K_GROUP .. h) == 0 then redis.call('HDEL', K_GROUPS, h) end
end

-- Task key @tk, whose failure record is @rec (bytes or decoded; false or nil when absent), leaves
-- the failed set: out of its group (its signature's, or 'other').
function group_remove(tk, rec)
  local f = rec and (type(rec) == 'table' and rec or fail_decode(rec))
  local h = f and group_id(signature(f.reason, f.msg))
  if h and redis.call('ZSCORE', K_GROUP .. h, tk) then
    group_forget(h, {tk})
  elseif redis.call('ZSCORE', K_GROUP .. GROUP_OTHER, tk) then
    group_forget(GROUP_OTHER, {tk})
  end
end

-- The set a bulk step over filter (@kind, @value) walks, oldest first, and whether a
-- task in it must still be matched: kind '' is the whole failed set, 'group' a group's
-- ZSET (nil when the group does not exist), 'match' and 'key' the failed set, each
-- failure matched by filter_hit. Returns the ZSET key (or nil), the group id, and an
-- error reply; with @audit given, the step's audit argument (a partitioned queue's walk,
-- PROTOCOL.md 14) comes fourth, as {done, total, skipped, mode}: mode '' for an absent or
-- '' argument (each partition is its own queue, as before), 'off' (a partition 1..: no
-- entry), or 'sum' for '+D,T,S' (partition 0, walked last: one entry, on its last step,
-- with D, T and S of the other partitions added).
function filter_set(kind, value, audit)
  if audit ~= nil then
    local d, t, s = string.match(audit, '^%+(%d+),(%d+),(%d+)$')
    if audit ~= '' and audit ~= 'off' and not d then
      return nil, nil, err('DQ_EINVAL', 'audit: %q is not off or +D,T,S', audit)
    end
    local z, gid, bad = filter_set(kind, value)
    return z, gid, bad, {tonumber(d) or 0, tonumber(t) or 0, tonumber(s) or 0,
      mode = d and 'sum' or audit}
  end
  if kind == '' then return K_FAILIDX end
  if kind == 'group' then
    local h = group_find(value)
    if not h then return nil end
    return K_GROUP .. h, h
  end
  if kind == 'match' then
    if #value < 1 or #value > DQ_NEEDLE_MAX then
      return nil, nil, err('DQ_EINVAL', 'match: %d bytes; 1..%d', #value, DQ_NEEDLE_MAX)
    end
    return K_FAILIDX
  end
  if kind == 'key' then
    if #value < 1 or #value > DQ_KEY_MAX then
      return nil, nil, err('DQ_EINVAL', 'key: %d bytes; 1..%d', #value, DQ_KEY_MAX)
    end
    return K_FAILIDX
  end
  return nil, nil, err('DQ_EINVAL', 'filter: %q is not group, match or key', kind)
end

-- Smart case, the one rule for text search (search.lua, and --match in the bulk scripts,
-- so a bulk action on a search acts on exactly what the search shows): a needle with an
-- ASCII capital letter matches its bytes exactly; one without matches ASCII letters in
-- either case. Returns the pattern for text_find, and whether it is plain. The pattern
-- is a character class per letter and %-escapes the rest, so matching copies nothing
-- (no lowering of a 64 KiB trace per task).
function text_needle(needle)
  if string.find(needle, '%u') then return needle, true end
  local p = string.gsub(needle, '.', function(c)
    if string.find(c, '%l') then return '[' .. c .. string.upper(c) .. ']' end
    if c == '\0' then return '%z' end
    if string.find(c, '%p') then return '%' .. c end
    return c
  end)
  return p, false
end

-- Whether @s contains the needle that text_needle turned into (@pat, @plain).
function text_find(s, pat, plain)
  return s ~= nil and string.find(s, pat, 1, plain) ~= nil
end

-- A failed task matches text @needle as search.lua matches it: in its task key or
-- anywhere in its failure record's bytes (smart case: text_needle).
-- (the bulk scripts call it per task with one needle: its pattern is made once)
local match_needle, match_pat, match_plain
local function match_failure(tk, rec, needle)
  if needle ~= match_needle then
    match_pat, match_plain = text_needle(needle)
    match_needle = needle
  end
  return text_find(tk, match_pat, match_plain) or text_find(rec, match_pat, match_plain)
end

-- The key ("k") of the envelope a failure record (bytes @r) holds, or nil. A v1 envelope
-- (no extensions, no key) is told by one byte, before anything is copied.
local function fail_key(r)
  local b = string.byte(r, 3)
  local p = (b == 196 and 5) or (b == 197 and 6) or (b == 198 and 8) or nil
  if string.sub(r, 1, 2) ~= '\152\001' or not p or string.byte(r, p) ~= 154 then return nil end
  local raw = rd(r, 3)
  if type(raw) ~= 'string' then return nil end
  local tk, _, _, k = env_peek(raw)
  return tk and k
end

-- Whether the failure under task key @tk (record bytes @rec; false when absent) is in
-- the scope of filter (@kind, @value), for a step walking filter_set's ZSET: each one
-- of a group's set or of the whole failed set; with 'match' those that match the text
-- (match_failure), with 'key' those whose envelope has that key (fail_key).
function filter_hit(kind, tk, rec, value)
  if kind == 'match' then return match_failure(tk, rec, value) end
  if kind == 'key' then return type(rec) == 'string' and fail_key(rec) == value end
  return true
end

-- The audit detail of a filter.
function filter_text(kind, value)
  if kind == '' then return '' end
  return ' ' .. kind .. '=' .. value
end

-- A task enters the failed set under key @tk (record @rec_new is about to be written):
-- a failure already under that key (a caller-chosen id that failed before) leaves first.
local function group_enter(tk, reason, msg, at)
  local old = redis.call('HGET', K_FAILED, tk)
  if old then group_remove(tk, old) end
  group_add(tk, reason, msg, at)
end

-- Keeps exactly cfg.failed_retention failures: the oldest beyond it are removed and
-- counted as trimmed. At most DQ_STEP_MAX per call (a lowered limit catches up over
-- calls).
function trim_failed(cfg)
  local excess = redis.call('ZCARD', K_FAILIDX) - cfg.failed_retention
  if excess <= 0 then return 0 end
  if excess > DQ_STEP_MAX then excess = DQ_STEP_MAX end
  local old = redis.call('ZPOPMIN', K_FAILIDX, excess)
  hist_forget_keys(old, 1, 2)
  for i = 1, #old, 2 do
    group_remove(old[i], redis.call('HGET', K_FAILED, old[i]))
    redis.call('HDEL', K_FAILED, old[i])
  end
  redis.call('HINCRBY', K_STATS, 'trimmed', #old / 2)
  return #old / 2
end

-- Parks a task (or undecodable bytes) in the failed set. @counter is the stats
-- field to bump ('failed' or 'expired').
function to_failed(cfg, tk, raw, reason, msg, trace, at, who, undecodable, counter)
  group_enter(tk, reason, truncate(msg, 4096), at)
  redis.call('HSET', K_FAILED, tk,
    fail_encode(raw, reason, truncate(msg, 4096), truncate(trace, 65536), at, who,
      undecodable))
  redis.call('ZADD', K_FAILIDX, dec(at), tk)
  redis.call('HINCRBY', K_STATS, counter or 'failed', 1)
  tally('f', 1, at)
  roll.add('f', 1)
  if counter == 'expired' then roll.add('x', 1) end
  trim_failed(cfg)
end
end -- groups

-- Done retention (docs/PROTOCOL.md 4.7): with the queue's done_retention N > 0, the last N
-- finished (acked) tasks are kept as done records in K_DONE, indexed by done time in
-- K_DONEIDX, exactly counted like the failed set; with done_retention_ms A > 0 none older
-- than A ms (by done time); with both, the tighter wins, and A alone keeps at most
-- 10000000 (done_retention's ceiling), so the set stays bounded. With both 0 (the
-- default) nothing is written.
-- Done record: fixarray(6) [1, done ms, claimed ms (the run's start), due ms, attempt
-- (counted from 1), worker]. No envelope: a kept task costs ~60 bytes, not its payload.

-- Keeps at most @keep done records and none done before @now - @age (@age 0: no age
-- limit; @keep 0 with @age > 0: the ceiling): the oldest go first. At most DQ_STEP_MAX
-- per call (a lowered retention catches up over calls, as trim_failed does). One ZCOUNT
-- more only with an age limit.
local function trim_done(keep, age, now)
  if keep == 0 and age > 0 then keep = 10000000 end
  local excess = redis.call('ZCARD', K_DONEIDX) - keep
  if age > 0 then
    -- aged records have the lowest scores, so ZPOPMIN takes exactly them first
    local aged = redis.call('ZCOUNT', K_DONEIDX, '-inf', '(' .. dec(now - age))
    if aged > excess then excess = aged end
  end
  if excess <= 0 then return 0 end
  if excess > DQ_STEP_MAX then excess = DQ_STEP_MAX end
  local old = redis.call('ZPOPMIN', K_DONEIDX, excess)
  local tks = {}
  for i = 1, #old, 2 do tks[#tks + 1] = old[i] end
  redis.call('HDEL', K_DONE, unpack(tks))
  return #tks
end

-- Records the acks in @acked ({task key, running record, attempt as claimed} each, at
-- most DQ_CALL_MAX) as done at @now, then trims to @keep and @age (trim_done). A task key
-- done again (a caller-chosen id reused) replaces its record, so the count stays exact.
-- The record is cut from the running record's bytes (worker, claimed, due follow its
-- envelope) without decoding or copying the envelope; a record of another layout is
-- skipped.
local function keep_done(keep, age, now, acked)
  if #acked == 0 then return end
  local h, z, at, ms = {}, {}, '\150\001' .. p_uint(now), dec(now)
  for _, a in ipairs(acked) do
    local r = a[2]
    local b, p, n = string.byte(r, 2), nil, nil -- the envelope's bin header
    if string.byte(r, 1) ~= 148 then b = nil end
    local len = #r -- (struct.unpack raises past the end: lengths are checked first)
    if b == 196 and len >= 3 then p, n = 4, string.byte(r, 3)
    elseif b == 197 and len >= 4 then p, n = 5, struct.unpack('>I2', r, 3)
    elseif b == 198 and len >= 6 then p, n = 7, struct.unpack('>I4', r, 3) end
    local w = p and p + n -- the worker's str header
    local c = w and string.byte(r, w)
    if c and c >= 160 and c < 192 then n, c = c - 160, w + 1
    elseif c == 217 and len >= w + 1 then n, c = string.byte(r, w + 1), w + 2
    elseif c == 218 and len >= w + 2 then n, c = struct.unpack('>I2', r, w + 1), w + 3
    elseif c == 219 and len >= w + 4 then n, c = struct.unpack('>I4', r, w + 1), w + 5
    else c = nil end
    c = c and c + n -- claimed, then due: two uints that end the record
    local u1 = c and string.byte(r, c)
    u1 = u1 and (u1 < 128 and 1 or u1 == 204 and 2 or u1 == 205 and 3 or u1 == 206 and 5 or
      u1 == 207 and 9 or nil)
    local u2 = u1 and string.byte(r, c + u1)
    u2 = u2 and (u2 < 128 and 1 or u2 == 204 and 2 or u2 == 205 and 3 or u2 == 206 and 5 or
      u2 == 207 and 9 or nil)
    if u2 and c + u1 + u2 == len + 1 then
      h[#h + 1] = a[1]
      h[#h + 1] = at .. string.sub(r, c) .. p_uint(tonumber(a[3]) + 1) .. string.sub(r, w, c - 1)
      z[#z + 1] = ms
      z[#z + 1] = a[1]
    end
  end
  if #h == 0 then return end
  redis.call('HSET', K_DONE, unpack(h))
  redis.call('ZADD', K_DONEIDX, unpack(z))
  trim_done(keep, age, now)
end

-- Queue limits (PROTOCOL.md 8.4), enforced by claim for all workers together:
-- rate_limit (tasks a minute: a token bucket of rate_burst tokens in K_LIMITS, refilled
-- by server time) and concurrency_limit (tasks in flight, ZCARD inflight), with the live
-- throttle (throttle.lua) over them, the tighter winning. With none on, a claim pays a
-- few comparisons and no command.
-- limits: one table of functions, one local of the 200 a chunk holds (docs/HACKING.md)
local limits = {}
do
local function tighter(a, b)
  if a > 0 and (b <= 0 or a < b) then return a end
  return b
end

-- The limits in force at @now: rate (tasks a minute), burst (tokens), concurrency (0:
-- off each), and the throttle's end when a throttle with an end is in force (else nil).
function limits.of(cfg, now)
  local rate, conc, till = cfg.rate_limit, cfg.concurrency_limit, nil
  local tu = cfg.throttle_until
  if tu == 0 or tu > now then
    rate = tighter(cfg.throttle_rate, rate)
    conc = tighter(cfg.throttle_concurrency, conc)
    if tu > 0 then till = tu end
  end
  local burst = 0
  if rate > 0 then
    local one = math.max(1, math.ceil(rate / 60)) -- one second's worth
    burst = cfg.rate_burst > 0 and cfg.rate_burst or one
    if rate ~= cfg.rate_limit and one < burst then burst = one end -- a throttle's: 1 s at most
  end
  return rate, burst, conc, till
end

-- What a claim at @now (claiming @ahead ms ahead) of @batch tasks may lease: nil when no
-- limit is on (the claim is as without), else a table with allow (0..batch), the state
-- limits.taken needs, and by ('rate' or 'concurrency': the limit that cut it).
function limits.allow(cfg, now, ahead, batch)
  if cfg.rate_limit <= 0 and cfg.concurrency_limit <= 0 and cfg.throttle_until < 0 then
    return nil
  end
  local rate, burst, conc, till = limits.of(cfg, now)
  if rate <= 0 and conc <= 0 then return nil end
  local lim = {allow = batch, till = till, now = now}
  if conc > 0 then
    local slots = math.max(0, conc - redis.call('ZCARD', K_INFLIGHT))
    if slots < lim.allow then lim.allow, lim.by = slots, 'concurrency' end
  end
  if rate > 0 then
    -- refilled to the end of the claim-ahead window: a worker that asks when told (the
    -- next token's time, less its window) finds the token there
    local b = redis.call('HMGET', K_LIMITS, 'tokens', 'at')
    local t, at, clock = tonumber(b[1]), tonumber(b[2]), now + ahead
    -- none yet (or not numbers, or from the future: malformed): a full bucket
    if not t or not at or t ~= t or at > clock + 86400000 then t, at = burst, clock end
    t = math.max(0, math.min(t, burst))
    if clock > at then t, at = math.min(burst, t + (clock - at) * rate / 60000), clock end
    lim.tokens, lim.at, lim.rate = t, at, rate
    local n = math.floor(t)
    if n < lim.allow then lim.allow, lim.by = n, 'rate' end
  end
  return lim
end

-- The claim's due @items (member, due pairs), asked for one past lim.allow: drops that
-- one and sets lim.held when it is there (a limit held a due task back).
function limits.cut(lim, items)
  lim.held = #items > 2 * lim.allow
  if lim.held then items[#items], items[#items - 1] = nil, nil end
end

-- After a limited claim leased @n tasks: takes their tokens; when a limit held back a
-- due task, counts it (limited_rate or limited_concurrency in stats: one HINCRBY) and
-- returns when the worker is to ask again (the claim reply's next due): the next token's
-- time, or -1 for a concurrency limit (a wake-up comes when a slot frees: limits.freed),
-- either no later than the end of the throttle that holds it. nil when nothing was held.
function limits.taken(lim, n)
  local by = lim.held and lim.by
  if lim.rate and by == 'rate' then -- (rate_held: when it last held one, for the verdict)
    redis.call('HSET', K_LIMITS, 'tokens', tostring(lim.tokens - n), 'at', dec(lim.at),
      'rate_held', dec(lim.now))
  elseif lim.rate then
    redis.call('HSET', K_LIMITS, 'tokens', tostring(lim.tokens - n), 'at', dec(lim.at))
  end
  if not by then return nil end
  local again
  if by == 'concurrency' then
    redis.call('HSET', K_LIMITS, 'held', dec(lim.now))
    redis.call('HINCRBY', K_STATS, 'limited_concurrency', 1)
    again = -1
  else
    redis.call('HINCRBY', K_STATS, 'limited_rate', 1)
    again = lim.at + math.max(0, math.ceil((1 - (lim.tokens - n)) * 60000 / lim.rate))
  end
  if lim.till and (again < 0 or lim.till < again) then again = lim.till end
  return again
end

-- After results freed slots: when a claim was held back by concurrency (the held flag)
-- and a slot is still free, wakes the idle workers once (a due time, as enqueue does).
-- Costs nothing while no concurrency limit is on.
function limits.freed(cfg, now)
  if cfg.concurrency_limit <= 0 and cfg.throttle_until < 0 then return end
  local _, _, conc = limits.of(cfg, now)
  if conc <= 0 or not redis.call('HGET', K_LIMITS, 'held') then return end
  if redis.call('ZCARD', K_INFLIGHT) < conc then
    redis.call('HDEL', K_LIMITS, 'held')
    wake(dec(now))
  end
end
end -- limits

-- Appends one operator action to the capped audit stream (the entry id carries the
-- server time).
local function audit(cfg, who, action, detail, result)
  redis.call('XADD', K_AUDIT, 'MAXLEN', '~', dec(cfg.audit_retention), '*',
    'who', who, 'action', action, 'detail', truncate(detail, 1024), 'result', result)
end

-- Role gates (docs/SECURITY.md, PROTOCOL 5.16a). Redis checks a script's commands one
-- at a time, so a user refused its third write would keep the first two: every script
-- asks first (redis.acl_check_cmd has no side effect) whether its user may run each
-- command it can run, reads included (a refused read after a write half-applies too),
-- and refuses before it writes anything. @needs lists them: a command in capitals,
-- then the keys it takes by their names below ('TIME HGET failed running ZADD sched'),
-- one [[...]] literal (Lua 5.1 does not fold '..': a concatenation is built every call);
-- tests/lint/gates.py checks that the list holds every command a script can reach and
-- that the role's ACL line in docs/SECURITY.md grants it. Redis 6 has no
-- acl_check_cmd: no gate there (its ACL still refuses the command itself).
-- What is kept across calls, and what is not: PROTOCOL 5.16a, "What the gate costs".
-- The gate's lists, parsed once per script: in the function library this table lives as
-- long as the library (parsing a claim's list cost 15 us a call); under EVALSHA it is
-- per call, as everything is. Each list is {cmd, key name or false, ...} pairs, in the
-- order of the text.
-- gates: the parsed and keyed lists and role_gate are this block's own (a script's
-- chunk may hold 200 locals, prelude included: docs/HACKING.md, "Lua limits")
local operator_gate, worker_gate, producer_gate, viewer_gate
do
local GATE_LISTS = {}
local function gate_list(script, needs)
  local list = GATE_LISTS[script]
  if list then return list end
  list = {}
  local cmd, checked
  for w in string.gmatch(needs, '%S+') do
    if string.match(w, '^%u+$') then
      if cmd and not checked then
        list[#list + 1] = cmd
        list[#list + 1] = false
      end
      cmd, checked = w, false
    else
      list[#list + 1] = cmd
      list[#list + 1] = w
      checked = true
    end
  end
  if cmd and not checked then
    list[#list + 1] = cmd
    list[#list + 1] = false
  end
  GATE_LISTS[script] = list
  return list
end

-- The same list with this call's keys in place of their names, and the eleven keys it
-- was made from (every other key is named from KEYS[1]): one entry per script, so a
-- worker or producer calling one queue makes it once (building it cost a claim 5-7 us
-- a call). Only the keys are kept, never a verdict: the ACL can change between two
-- calls, and two calls can be two users.
local GATE_KEYED = {}
local function gate_keyed(script, needs)
  local c = GATE_KEYED[script]
  if c and c[1] == K_SCHED and c[2] == K_IDS and c[3] == K_INFLIGHT and c[4] == K_RUNNING
      and c[5] == K_FAILED and c[6] == K_FAILIDX and c[7] == K_STATS and c[8] == K_SEQ
      and c[9] == K_CONFIG and c[10] == K_AUDIT and c[11] == K_WAKE then
    return c.list, nil, c.rk
  end
  -- hist, group and roll stand for every key of their kind (one task's history, one
  -- group, one minute's rollup)
  local rk = K_PREFIX .. 'roll:gate'
  local keys = {sched = K_SCHED, ids = K_IDS, inflight = K_INFLIGHT, running = K_RUNNING,
    failed = K_FAILED, failidx = K_FAILIDX, stats = K_STATS, seq = K_SEQ, config = K_CONFIG,
    audit = K_AUDIT, wake = K_WAKE, workers = K_WORKERS, beats = K_BEATS, pause = K_PAUSE,
    groups = K_GROUPS, group = K_GROUP .. 'gate', tally = K_TALLY, uniq = K_UNIQ,
    sdefs = K_SDEFS, stpl = K_STPL, snext = K_SNEXT, slow = K_SLOW,
    hist = K_PREFIX .. 'hist:gate', done = K_DONE, doneidx = K_DONEIDX, kin = K_KIN,
    kq = K_KQ .. 'gate', kpark = K_KPARK, limits = K_LIMITS, parts = K_PREFIX .. 'parts',
    roll = rk}
  local names, list = gate_list(script, needs), {}
  for i = 1, #names, 2 do
    local name = names[i + 1]
    local key = name and keys[name]
    if name and not key then return nil, name end
    list[i], list[i + 1] = names[i], key or false
  end
  GATE_KEYED[script] = {K_SCHED, K_IDS, K_INFLIGHT, K_RUNNING, K_FAILED, K_FAILIDX, K_STATS,
    K_SEQ, K_CONFIG, K_AUDIT, K_WAKE, list = list, rk = rk}
  return list, nil, rk
end

local function role_gate(role, script, needs)
  roll.reset() -- every call that writes asks its gate first (tests/lint/gates.py)
  local check = redis.acl_check_cmd
  if check == nil then return nil end
  local list, unknown, rk = gate_keyed(script, needs)
  if not list then
    return redis.error_reply('ERR role gate of ' .. script .. ': unknown key ' .. unknown)
  end
  -- A user refused only the rollups' commands (a role line from before them: no
  -- PEXPIREAT, a producer without ~dq:{*}:roll:*) still runs the script, writing no
  -- history: an upgrade must not stop the queue over its charts (PROTOCOL.md 13).
  local rolls, roll_ok = false, true
  for i = 1, #list, 2 do
    local cmd, key = list[i], list[i + 1]
    local ok
    if key then ok = check(cmd, key) else ok = check(cmd) end
    if key == rk then
      rolls = true
      if not ok then roll_ok, ok = false, true end
    end
    if not ok then
      return redis.error_reply(string.format('NOPERM this user may not run %s (%s runs %s%s, ' ..
        'which this user may not); see the roles in docs/SECURITY.md', role, script, cmd,
        key and ' on ' .. key or ''))
    end
  end
  if rolls then roll.allow(roll_ok) end
  return nil
end
-- Operator actions are the scripts that write the audit log; workers register in the
-- worker registry; producers enqueue; the read-only scripts are the viewer's.
function operator_gate(script, needs)
  return role_gate('operator actions', script, needs)
end
function worker_gate(script, needs)
  return role_gate('a worker', script, needs)
end
function producer_gate(script, needs)
  return role_gate("a producer's enqueue", script, needs)
end
function viewer_gate(script, needs)
  return role_gate("the viewer's reads", script, needs)
end
end -- gates

-- Comma-joined list of ids for the audit log, bounded.
local function id_list(ids, from)
  local s = table.concat(ids, ',', from)
  if #s > 1000 then s = string.sub(s, 1, 1000) .. '...' end
  return s
end

-- The earliest due time in the scheduled set, or -1.
local function next_due()
  local f = redis.call('ZRANGE', K_SCHED, 0, 0, 'WITHSCORES')
  if f[2] then return tonumber(f[2]) end
  return -1
end

-- History: per-minute rollups (PROTOCOL.md 13). One HASH per minute of server time,
-- dq:{Q}:roll:<minute> (named from KEYS[1], in the queue's slot), of counters a call adds
-- to: it sums its counts here (roll.add, roll.run) and roll.flush writes one HINCRBY per
-- nonzero field at its end, however many tasks it moved. The call that creates a
-- minute's hash samples the due backlog into it (b, a) and sets its expiry; the stats
-- hash gets the run-time histogram too, never trimmed. history_minutes 0: nothing is
-- written at all. The costs are counted in instructions (PROTOCOL.md 13): a call's work
-- here is its commands and little else (no loop over a table per task, no string made
-- twice).
-- rollups: the pending counts, the buckets and open are this block's own
do
local H = {'h0', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8', 'h9', 'h10', 'h11'}
-- this call's counts: field -> n (P), its runs per bucket (RUNS[1..12], h0 .. h11) and
-- their sum (RT). In the function library they outlive a call: reset clears what a call
-- that raised an error before its flush left.
local P, RUNS, RT, NR, any = {}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0, false
-- false while this call's user may not write the rollups (role_gate; nothing is written)
local allowed = true

local function clear()
  for f in pairs(P) do P[f] = nil end
  if NR > 0 then
    for b = 1, 12 do RUNS[b] = 0 end
  end
  RT, NR, any = 0, 0, false
end

function roll.reset()
  if any then clear() end
end

function roll.allow(ok)
  allowed = ok
end

function roll.add(f, n)
  if n ~= 0 then
    P[f] = (P[f] or 0) + n
    any = true
  end
end

-- One run of @ms (claim to settle): its bucket, by the bounds (ms, inclusive) 5, 10, 25,
-- 50, 100, 250, 500, 1000, 2500, 5000, 10000 and open (h11), and the sum. A tree of
-- comparisons, not a loop over a table: a claim settling a batch calls it per task.
function roll.run(ms)
  if ms < 0 then ms = 0 end
  local b
  if ms <= 100 then
    if ms <= 10 then
      b = ms <= 5 and 1 or 2
    elseif ms <= 25 then
      b = 3
    else
      b = ms <= 50 and 4 or 5
    end
  elseif ms <= 1000 then
    if ms <= 250 then
      b = 6
    else
      b = ms <= 500 and 7 or 8
    end
  elseif ms <= 5000 then
    b = ms <= 2500 and 9 or 10
  else
    b = ms <= 10000 and 11 or 12
  end
  RUNS[b] = RUNS[b] + 1
  RT, NR, any = RT + ms, NR + 1, true
end

-- Minute @m's hash key, made again only when the queue or the minute changes (building
-- it cost a call as much as a command).
local RK_PREFIX, RK_M, RK
local function roll_key(m)
  if m ~= RK_M or K_PREFIX ~= RK_PREFIX then
    RK_PREFIX, RK_M, RK = K_PREFIX, m, K_PREFIX .. 'roll:' .. dec(m)
  end
  return RK
end

-- Opens minute @m's hash @rk, whose marker o (1) was just made: the backlog sample (due
-- members of sched, and the age of the oldest, 0 when none is due; HINCRBY of fields a
-- new hash lacks sets them). Once a minute, so it checks its own commands when it runs
-- instead of every call's gate checking them (tests/lint/gates.py, LAZY): a user refused
-- them gets no sample. The caller sets the expiry (history_minutes after the minute
-- ends), which the gate checks: a user refused it writes no rollups at all, so no hash
-- that would never expire.
local function open(rk, m, now)
  local check = redis.acl_check_cmd
  if not check or (check('ZCOUNT', K_SCHED) and check('ZRANGE', K_SCHED) and
      check('HINCRBY', rk)) then
    local b = redis.call('ZCOUNT', K_SCHED, '-inf', dec(now))
    local first, a = next_due(), 0
    if b > 0 and first >= 0 and first <= now then a = now - first end
    redis.call('HINCRBY', rk, 'b', b)
    redis.call('HINCRBY', rk, 'a', dec(a))
  end
end

-- Writes this call's counts into the minute of @now (history_minutes @hm; 0: off, and the
-- counts are dropped). A HINCRBY that answers with its own increment made its field: only
-- then can the hash be new, and a HINCRBY of its marker o tells (1: this call made the
-- hash, or remade it after an eviction), so a call pays for the opening check only the
-- first time it writes a field in a minute.
function roll.flush(hm, now)
  if not any then return end
  if not hm or hm <= 0 or not allowed then
    clear()
    return
  end
  local m = math.floor(now / 60000)
  local rk = roll_key(m)
  local fresh = false
  for f, n in pairs(P) do
    if redis.call('HINCRBY', rk, f, n) == n then fresh = true end
  end
  -- the runs: into the minute and the stats hash's all-time histogram
  if NR > 0 then
    for b = 1, 12 do
      local n = RUNS[b]
      if n > 0 then
        if redis.call('HINCRBY', rk, H[b], n) == n then fresh = true end
        redis.call('HINCRBY', K_STATS, H[b], n)
      end
    end
    if RT > 0 then
      if redis.call('HINCRBY', rk, 't', RT) == RT then fresh = true end
      redis.call('HINCRBY', K_STATS, 't', RT)
    end
  end
  clear()
  if fresh and redis.call('HINCRBY', rk, 'o', 1) == 1 then
    redis.call('PEXPIREAT', rk, dec((m + 1 + hm) * 60000))
    open(rk, m, now)
  end
end

-- Heartbeat's part: opens the minute of @now if no call has (so an idle queue with due
-- tasks gets its sample). @hm: history_minutes, or nil (read here, only when it opens).
function roll.touch(hm, now)
  if not allowed then return end
  local m = math.floor(now / 60000)
  local rk = roll_key(m)
  if redis.call('EXISTS', rk) == 1 then return end
  hm = hm or config_of({'history_minutes'}).history_minutes
  if hm > 0 then
    redis.call('HINCRBY', rk, 'o', 1)
    redis.call('PEXPIREAT', rk, dec((m + 1 + hm) * 60000))
    open(rk, m, now)
  end
end

end -- rollups

-- The id index: where a scheduled task with a caller-chosen id is, as due and seq.
local function ids_get(id)
  local v = redis.call('HGET', K_IDS, id)
  if not v then return nil end
  local d, s = string.match(v, '^(%d+):(%d+)$')
  return tonumber(d), tonumber(s)
end

-- The member of the scheduled set with score @due and sequence @seq, or nil. Members of
-- one score sort by their bytes, which start with the fixed-width seq, so a binary
-- search over ranks finds it: O(log^2 N), however many tasks share that millisecond.
local function member_at(due, seq)
  local lo = redis.call('ZCOUNT', K_SCHED, '-inf', '(' .. dec(due))
  local hi = lo + redis.call('ZCOUNT', K_SCHED, dec(due), dec(due)) - 1
  local want = p_u64(seq)
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local m = redis.call('ZRANGE', K_SCHED, mid, mid)[1]
    local s = string.sub(m, 3, 11)
    if s == want then
      return m
    elseif s < want then
      lo = mid + 1
    else
      hi = mid - 1
    end
  end
  return nil
end

-- Adds a task to the scheduled set (and its caller-chosen id to the id index). When
-- it is due before everything already scheduled, idle workers (which sleep until the
-- earliest due time they know of) are told on the wake channel, so they do not
-- oversleep it. Pub/sub delivers at once; it does not wait for Redis' hz clock.
-- With @quiet the caller publishes once for many (claim's settling).
local function schedule(e, due, quiet)
  local first = not quiet and next_due()
  redis.call('ZADD', K_SCHED, dec(due), env_encode(e))
  if e.id then redis.call('HSET', K_IDS, e.id, dec(due) .. ':' .. dec(e.seq)) end
  if first and (first < 0 or due < first) then
    wake(dec(due))
  end
end

-- Checks that the caller still holds the lease of task key @tk: the running record must
-- be the one its claim created, named by the claim's server time @claimed and the
-- task's @attempt then (a requeue resets attempts and a release keeps them, so the
-- attempt alone cannot tell a stale claim from a new one). Returns the running record
-- and its envelope, or nil and an error reply.
local function holder(tk, attempt, claimed)
  local r = redis.call('HGET', K_RUNNING, tk)
  if not r then
    return nil, nil, err('DQ_ELEASE', 'task %s is not in flight (lease expired and reaped, ' ..
      'or already finished)', tkey_id(tk))
  end
  local run = run_decode(r)
  local e = run and env_decode(run.m)
  if not e then
    return nil, nil, err('DQ_EPROTO', 'running record of task %s is malformed', tkey_id(tk))
  end
  if e.attempt ~= tonumber(attempt) or run.claimed ~= tonumber(claimed) then
    return nil, nil, err('DQ_ELEASE', 'task %s was claimed again (attempt %d by %s); this ' ..
      'lease (attempt %s) was lost', tkey_id(tk), e.attempt + 1, tostring(run.worker),
      tostring(tonumber(attempt) and tonumber(attempt) + 1))
  end
  return run, e
end

-- Per-key limits (docs/PROTOCOL.md 4.10). A task enqueued with a key ("k" extension) goes
-- into sched like any other. With key_concurrency L > 0, claim counts the key's tasks in
-- flight (kin) and a due keyed task whose key already has L in flight is parked: moved
-- from sched to the key's own ZSET (kq:<key>, same score), so no later claim looks at it
-- again. When a keyed task leaves in flight (ack, retry, fail, release, reap, cancel) its
-- count drops and up to the room left of the key's earliest parked tasks go back to sched.
-- Unkeyed tasks never reach this code: claim calls key_admit only when L > 0, and a
-- settle calls key_left only for a task whose envelope has a key.
-- keys: key_admit, key_done, key_any and unrun are the prelude's; the rest is this block's
-- own
local key_admit, key_done, key_any, unrun
do
-- members one claim may look at past its batch, parking them (bounds a claim's cost
-- however many tasks of full keys are due)
local KEY_LOOK_MAX = 1000
-- parked tasks one settle moves back (a raised or removed limit catches up over settles)
local KEY_PROMOTE_MAX = 100

-- Key @k has @n more parked tasks (fewer when negative): its count in kpark and the
-- queue's in stats.
local function park_count(k, n)
  -- (ZADD INCR, not ZINCRBY: the roles' ACL lines grant ZADD)
  if redis.call('ZADD', K_KPARK, 'INCR', n, k) + 0 <= 0 then redis.call('ZREM', K_KPARK, k) end
  redis.call('HINCRBY', K_STATS, 'parked', n)
end

-- claim's admission of @items (ZRANGEBYSCORE pairs, member then due, due by @now +
-- @ahead), for a queue with key_concurrency > 0 (@cfg): returns the pairs claim should
-- take, at most @batch, and what env_peek said of the j-th pair (@peeks: its task key,
-- id and deadline at 3j-2, 3j-1 and 3j, false for none; nothing when it did not read it
-- or it did not decode), so claim reads no member twice. Parks the keyed ones whose key
-- is full, and when it parked some and has fewer than @batch, looks at the next members,
-- at most KEY_LOOK_MAX in all. Counts the admitted ones in kin. A member that claim will
-- fail (undecodable, expired) is passed on as it is, uncounted. Cost: one env_peek per
-- v2 member, one HMGET of the first page's keys and one HGET per other distinct key
-- (later pages), one ZADD, ZADD INCR and HINCRBY per parked key
-- and one ZREM per page, one HINCRBY per admitted key, and per extra page one
-- ZRANGEBYSCORE (pages of 100, 200, 400, ...: 5 in a look of 1000 all parked).
function key_admit(cfg, items, now, ahead, batch)
  local lim = cfg.key_concurrency
  local keep, peeks, cnt, add, looked, want, quick = {}, {}, {}, {}, 0, batch, false
  -- The first page (at most batch members, all of which the call may take) is read at
  -- once, and its keys' counts come in one HMGET: a call of many keys makes one command
  -- for them, not one each. Later pages (parking a backlog) read as they go.
  local pre, ask = {}, {}
  for i = 1, #items, 2 do
    if string.byte(items[i], 1) == 154 then
      local r = {env_peek(items[i])}
      pre[i] = r
      if r[1] and r[4] and not (r[3] and now > r[3]) and cnt[r[4]] == nil then
        cnt[r[4]] = false
        ask[#ask + 1] = r[4]
      end
    end
  end
  if #ask > 0 then
    local got = redis.call('HMGET', K_KIN, unpack(ask))
    for j, k in ipairs(ask) do cnt[k] = tonumber(got[j]) or 0 end
  end
  while true do
    local park, parked = {}, 0
    for i = 1, #items, 2 do
      if #keep >= 2 * batch then break end
      local m, key, tk, id, dl, k = items[i], nil, nil, nil, nil, nil
      looked = looked + 1
      if string.byte(m, 1) == 154 then -- v2: may have a key
        -- after a parked member, likely another of a full key's backlog: its key alone
        -- (no id made), and the whole reading only if it is admitted after all
        local r = pre and pre[i]
        if r then
          tk, id, dl, k = r[1], r[2], r[3], r[4]
        else
          tk, id, dl, k = env_peek(m, quick)
        end
        if tk and k and not (dl and now > dl) then key = k end
      end
      local n = key and (cnt[key] or tonumber(redis.call('HGET', K_KIN, key)) or 0)
      if n and n >= lim then
        cnt[key] = n
        local p = park[key]
        if not p then
          p = {}
          park[key] = p
        end
        p[#p + 1] = items[i + 1]
        p[#p + 1] = m
        parked = parked + 1
        quick = true
      else
        if quick and tk then tk, id = env_peek(m) end
        quick = false
        if key then
          cnt[key] = n + 1
          add[key] = (add[key] or 0) + 1
        end
        keep[#keep + 1] = m
        keep[#keep + 1] = items[i + 1]
        if tk then
          local j = #keep / 2
          peeks[3 * j - 2], peeks[3 * j - 1], peeks[3 * j] = tk, id or false, dl or false
        end
      end
    end
    if parked > 0 then
      local gone = {}
      for k, p in pairs(park) do
        redis.call('ZADD', K_KQ .. k, unpack(p))
        park_count(k, #p / 2)
        for j = 2, #p, 2 do gone[#gone + 1] = p[j] end
      end
      redis.call('ZREM', K_SCHED, unpack(gone))
    end
    if parked == 0 or #keep >= 2 * batch or looked >= KEY_LOOK_MAX or #items < 2 * want then
      break
    end
    pre = nil
    -- the kept ones are still in sched, first in due order: the next page follows them.
    -- Each page twice the last while whole pages park (a full key's backlog: fewer
    -- commands per member parked), and none larger than the look has left.
    want = math.min(math.max(batch, 100, 2 * want), KEY_LOOK_MAX - looked)
    items = redis.call('ZRANGEBYSCORE', K_SCHED, '-inf', dec(now + ahead), 'WITHSCORES',
      'LIMIT', #keep / 2, want)
  end
  for k, n in pairs(add) do redis.call('HINCRBY', K_KIN, k, n) end
  return keep, peeks
end

-- @gone (default 1) tasks of task key @k left in flight: its count drops, and its earliest
-- parked tasks go back to sched while the key has room (all of them, KEY_PROMOTE_MAX at a
-- time, when the limit is off). A task claimed while the limit was off was never
-- counted: the count never goes below 0 (PROTOCOL.md 4.10, "Changing the limit"). @st:
-- what this call has read already (nil: nothing), for the settles of many tasks in one
-- call: lim, the queue's key_concurrency (one HMGET a call), and parked, whether any key
-- has parked tasks (one ZCARD a call, so a call with nothing parked pops nothing).
-- Returns it.
local function key_left(k, st, gone)
  st = st or {}
  local n = redis.call('HINCRBY', K_KIN, k, -(gone or 1))
  if n <= 0 then
    redis.call('HDEL', K_KIN, k)
    n = 0
  end
  if st.lim == nil then st.lim = config_of({'key_concurrency'}).key_concurrency end
  local lim, room = st.lim, KEY_PROMOTE_MAX
  if lim > 0 and lim - n < room then room = lim - n end
  if room <= 0 then return st end
  if st.parked == nil then st.parked = redis.call('ZCARD', K_KPARK) > 0 end
  if not st.parked then return st end
  local z = redis.call('ZPOPMIN', K_KQ .. k, room)
  if #z == 0 then return st end
  local first, back = next_due(), {}
  for i = 1, #z, 2 do
    back[#back + 1] = z[i + 1]
    back[#back + 1] = z[i]
  end
  redis.call('ZADD', K_SCHED, unpack(back))
  park_count(k, -#z / 2)
  if first < 0 or tonumber(z[2]) < first then wake(z[2]) end
  return st
end

-- The key of the task whose running record is @r, or nil. The envelope is the record's
-- first element (a bin, run_encode): a v1 one has no extensions, so no key (one byte
-- compare); a v2 one is read in place by env_peek (as claim read it), not decoded:
-- no tables, no copy of the payload. Ack's and claim's gates (key_any) and the settles
-- (key_done) ask this one function, so they agree on which tasks reach key_left.
local function run_key(r)
  local b, p = string.byte(r, 2), nil
  if b == 196 then p = 4 elseif b == 197 then p = 5 elseif b == 198 then p = 7 end
  if not p or string.byte(r, p) ~= 154 then return nil end
  -- v2 (the envelope's first byte is there, so is the bin's length before it)
  local l = b == 196 and string.byte(r, 3) or struct.unpack(b == 197 and '>I2' or '>I4', r, 3)
  if p + l - 1 > #r then return nil end -- malformed: no key, no error
  local _, _, _, k = env_peek(string.sub(r, p, p + l - 1))
  return k
end

-- The task whose running record is @r was acked: key_left for its key, if it has one.
-- With @st.acked (the acks of one call, settle_acks), the keys are gathered there, and
-- key_done(nil, @st) then runs key_left once per key for all its acks: one HINCRBY and
-- one promotion per key per call, not per task (and no more promoted than the key has
-- room for after all of them). @st as for key_left; returns it.
function key_done(r, st)
  if r == nil then
    for _, k in ipairs(st.acked) do key_left(k, st, st.acked[k]) end
    st.acked = {}
    return st
  end
  local k = run_key(r)
  if not k then return st end
  local a = st and st.acked
  if not a then return key_left(k, st) end
  if not a[k] then
    a[#a + 1] = k
    a[k] = 0
  end
  a[k] = a[k] + 1
  return st
end

-- Whether any of the running records @recs (an HMGET's answer; false for a missing one)
-- is a keyed task's: the acks that settle them reach key_left. v1 records cost one byte
-- compare each. Lets ack and claim check the commands of per-key limits only when a call
-- can run them (their role gates, PROTOCOL 5.16a).
function key_any(recs)
  for _, r in ipairs(recs) do
    if r and run_key(r) then return true end
  end
  return false
end

-- Takes task key @tk out of in-flight; @k: the task's key, if it has one (key_left).
function unrun(tk, k)
  redis.call('ZREM', K_INFLIGHT, tk)
  redis.call('HDEL', K_RUNNING, tk)
  if k then key_left(k) end
end
end -- keys

-- ---- worker registry and pause (PROTOCOL.md 10.9) ----------------------------------
-- (their keys, K_WORKERS, K_BEATS and K_PAUSE, are named in the keys block above)

local PAUSE_REASON_MAX = 200     -- bytes of a pause reason (DQ_PAUSE_REASON_MAX in C)
local WORKER_COMMAND_MAX = 1024 -- bytes of a worker command kept (DQ_WORKER_COMMAND_MAX in C)

-- Worker record: fixarray(13) [1, host, pid, version, started ms, beat interval ms,
-- concurrency, busy, done, retried, failed, command, draining bool].
-- Version 2: fixarray(14), the same with version 2 and then hung (handlers still running
-- past their time limit); written only when hung > 0, so a record reads as before
-- otherwise.
local function worker_encode(w)
  local body = p_str(w.host) .. p_uint(w.pid) .. p_str(w.version) ..
    p_uint(w.started) .. p_uint(w.beat) .. p_uint(w.conc) .. p_uint(w.busy) ..
    p_uint(w.done) .. p_uint(w.retried) .. p_uint(w.failed) .. p_str(w.command) ..
    (w.draining and '\195' or '\194')
  if w.hung and w.hung > 0 then return '\158\002' .. body .. p_uint(w.hung) end
  return '\157\001' .. body
end
-- worker records: the kinds tables are this block's own
local worker_decode
do
local WORKER_KINDS = {'uint', 'bytes', 'uint', 'bytes', 'uint', 'uint', 'uint', 'uint', 'uint',
  'uint', 'uint', 'bytes', 'bool'}
local WORKER2_KINDS = {'uint', 'bytes', 'uint', 'bytes', 'uint', 'uint', 'uint', 'uint', 'uint',
  'uint', 'uint', 'bytes', 'bool', 'uint'}
function worker_decode(r)
  local t = r and rd_record(r, WORKER_KINDS)
  if t and t[1] ~= 1 then return nil end
  if not t then
    t = r and rd_record(r, WORKER2_KINDS)
    if not t or t[1] ~= 2 then return nil end
  end
  return {host = t[2], pid = t[3], version = t[4], started = t[5], beat = t[6], conc = t[7],
    busy = t[8], done = t[9], retried = t[10], failed = t[11], command = t[12],
    draining = t[13], hung = t[14] or 0}
end
end -- worker records

-- The queue's pause, or nil when it is not paused (never paused, resumed, or the pause's
-- time ran out: an ended pause needs no write to end it). until is 0 for "until resumed".
local function pause_get(now)
  local p = redis.call('HMGET', K_PAUSE, 'by', 'since', 'until', 'reason')
  local since, till = tonumber(p[2]), tonumber(p[3]) or 0
  if not since or (till > 0 and till <= now) then return nil end
  return {by = p[1] or '', since = since, till = till, reason = p[4] or ''}
end

-- The four ways a worker settles a task it holds (ack, retry, fail, release: sections
-- 5.5 to 5.10 of docs/PROTOCOL.md), shared by their scripts and by claim, which settles
-- a batch of results before it claims. Each takes the fence (task key @tk, @attempt
-- and @claimed as claimed) and returns its result, or nil and the error reply.
-- The fence of running record @r read in place, without decoding the envelope (the hot
-- path of ack): true or false when the record has the layout claim writes (claimed and
-- due as 9-byte uints at its end), nil when it does not (the caller then decodes it all).
local function fence_quick(r, attempt, claimed)
  local n = #r
  if n < 40 or string.byte(r, n - 17) ~= 207 or string.byte(r, n - 8) ~= 207 then return nil end
  local hi, lo = struct.unpack('>I4I4', r, n - 16)
  if hi * 4294967296 + lo ~= tonumber(claimed) then return false end
  local b, e = string.byte(r, 2), nil -- the envelope's bin header, then where it starts
  if b == 196 then e = 4 elseif b == 197 then e = 5 elseif b == 198 then e = 7 else return nil end
  local x, idlen = string.byte(r, e + 11), nil
  if x == 192 then idlen = 1
  elseif x and x >= 160 and x < 192 then idlen = 1 + x - 160
  elseif x == 217 then idlen = 2 + string.byte(r, e + 12)
  else return nil end
  local a, _, kind = rd(r, e + 11 + idlen)
  if kind ~= 'uint' then return nil end
  return a == tonumber(attempt)
end

-- Unique-for windows (docs/PROTOCOL.md 4.1 "uf", key uniq in section 2): a task done
-- with a window keeps its caller-chosen id refused by enqueue until the window ends.
-- Only a v2 envelope can carry one, so a v1 task's ack costs one byte compare and no
-- command; a v2 one without "uf" a decode in Lua. Each ack of a task with a window also
-- trims up to UNIQ_TRIM_STEP ended windows, oldest first: the set holds the open windows
-- and at most the ended ones no later finish has trimmed yet (bounded steps).
-- unique-for: the trim step is this block's own
local uniq_acked
do
local UNIQ_TRIM_STEP = 100
-- After ack of running record @r: records its window, if it has one. @now is the
-- call's time if known (nil: read here, once); returns it.
function uniq_acked(r, now)
  local b, p = string.byte(r, 2), nil
  if b == 196 then p = 4 elseif b == 197 then p = 5 elseif b == 198 then p = 7 end
  if not p or string.byte(r, p) ~= 154 then return now end -- v1: no extensions
  local run = run_decode(r)
  local e = run and env_decode(run.m)
  if not e or not e.uf or not e.id then return now end
  now = now or now_ms()
  local old = redis.call('ZRANGEBYSCORE', K_UNIQ, '-inf', dec(now), 'LIMIT', 0, UNIQ_TRIM_STEP)
  if #old > 0 then redis.call('ZREM', K_UNIQ, unpack(old)) end
  redis.call('ZADD', K_UNIQ, dec(now + e.uf), e.id)
  return now
end
end -- unique-for

-- ack: 1. The caller counts 'done' (one HINCRBY per call). @kept, when the queue keeps
-- done tasks (done retention), gets {task key, running record, attempt} of the ack.
local function settle_ack(tk, attempt, claimed, kept)
  local r = redis.call('HGET', K_RUNNING, tk)
  if r and fence_quick(r, attempt, claimed) then
    hist_acked(tk, r)
    unrun(tk)
    key_done(r)
    uniq_acked(r)
    if kept then kept[#kept + 1] = {tk, r, attempt} end
    return 1
  end
  local run, _, bad = holder(tk, attempt, claimed) -- the precise error, or an odd layout
  if not run then return nil, bad end
  hist_acked(tk, r)
  unrun(tk)
  key_done(r)
  uniq_acked(r)
  if kept then kept[#kept + 1] = {tk, r, attempt} end
  return 1
end

-- Many acks at once (ack.lua, claim's settling), @tks, @atts and @clms in step: one HMGET
-- reads their running records, and one ZREM and one HDEL end the leases whose fence
-- holds by fence_quick, instead of three commands per task. The rest (a lost lease, an
-- odd layout) and a task key's second and later times go through settle_ack one by one
-- after that, so each gets its precise error, as separate calls would. Returns one entry
-- per ack, in order (1, or the error reply), and how many were acked. @kept as for
-- settle_ack. @recs: their running records if the caller read them already (key_any).
local function settle_acks(tks, atts, clms, kept, recs)
  local out, gone, seen, later = {}, {}, {}, {}
  if #tks == 0 then return out, 0 end
  recs = recs or redis.call('HMGET', K_RUNNING, unpack(tks))
  for i, tk in ipairs(tks) do
    if not seen[tk] and recs[i] and fence_quick(recs[i], atts[i], clms[i]) then
      gone[#gone + 1] = tk
      hist_acked(tk, recs[i])
      if kept then kept[#kept + 1] = {tk, recs[i], atts[i]} end
      out[i] = 1
    else
      later[#later + 1] = i
    end
    seen[tk] = true
  end
  if #gone > 0 then
    redis.call('ZREM', K_INFLIGHT, unpack(gone))
    redis.call('HDEL', K_RUNNING, unpack(gone))
    local now, st = nil, {acked = {}} -- (key_done: the keys' counts once per key)
    for i, tk in ipairs(tks) do
      if out[i] == 1 then
        now = uniq_acked(recs[i], now)
        st = key_done(recs[i], st)
      end
    end
    key_done(nil, st)
  end
  local done = #gone
  for _, i in ipairs(later) do
    local r, bad = settle_ack(tks[i], atts[i], clms[i], kept)
    if r then done = done + 1 end
    out[i] = r or bad
  end
  return out, done
end

-- retry: the next due ms, or -1 when attempts are exhausted (the task went to failed).
local function settle_retry(cfg, now, tk, attempt, claimed, msg, who, quiet)
  local run, e, bad = holder(tk, attempt, claimed)
  if not run then return nil, bad end
  hist_run(tk, run, e, 'retry', now, msg) -- (its 1 KiB, before the envelope's 512 bytes)
  roll.run(now - run.claimed)
  msg = truncate(msg, 512)
  e.attempt = e.attempt + 1
  e.last_error = msg
  if (e.max > 0 and e.attempt >= e.max) or e.attempt >= DQ_ATTEMPTS_MAX then
    to_failed(cfg, tk, env_encode(e), 'attempts exhausted', msg, '', now, who, false)
    unrun(tk, e.k)
    return -1
  end
  local backoff = cfg.backoff_base_ms * math.pow(2, e.attempt - 1)
  if backoff > cfg.backoff_cap_ms then backoff = cfg.backoff_cap_ms end
  local due = now + math.floor(backoff)
  schedule(e, due, quiet)
  unrun(tk, e.k)
  redis.call('HINCRBY', K_STATS, 'retried', 1)
  tally('r', 1, now)
  roll.add('r', 1)
  return due
end

-- fail: 1.
local function settle_fail(cfg, now, tk, attempt, claimed, msg, trace, who)
  local run, e, bad = holder(tk, attempt, claimed)
  if not run then return nil, bad end
  hist_run(tk, run, e, 'fail', now, msg)
  roll.run(now - run.claimed)
  e.attempt = math.min(e.attempt + 1, DQ_ATTEMPTS_MAX) -- stays readable
  to_failed(cfg, tk, env_encode(e), 'error', msg, trace, now, who, false)
  unrun(tk, e.k)
  return 1
end

-- release: 1; the task is due @now again, its attempt not counted.
local function settle_release(now, tk, attempt, claimed, quiet)
  local run, e, bad = holder(tk, attempt, claimed)
  if not run then return nil, bad end
  schedule(e, now, quiet)
  unrun(tk, e.k)
  return 1
end

-- Periodic schedules (PROTOCOL.md 5.30). A record is JSON text (cjson): spec, tz, every
-- (ms; 0 for cron), anchor (ms, every's k = 0), paused, fires (cron: the next firings
-- computed by C, which knows time zones; Lua cannot), last (ms of the last firing),
-- last_id, late (ms the last firing ran after the earliest time it stands for: for a
-- catch-up, the first missed one), missed (firings skipped by it), runs, created, updated, by. Times are integers below 2^47: cjson's 14 digits
-- keep them exact.
-- schedules: the firing limit, sched_after and sched_fire_one are this block's own
local SCHED_LOW, SCHED_NAME_MAX, sched_decode, sched_pass, sched_unlow, sched_arm, sched_fire
local sched_soonest
do
local SCHED_FIRE_MAX = 10 -- firings per claim call
SCHED_LOW = 8 -- a cron list with this many firings or fewer is topped up
SCHED_NAME_MAX = 100

function sched_decode(raw)
  if not raw then return nil end
  local ok, r = pcall(cjson.decode, raw)
  if not ok or type(r) ~= 'table' or type(r.spec) ~= 'string' then return nil end
  if type(r.every) ~= 'number' or type(r.anchor) ~= 'number' then return nil end
  if type(r.fires) ~= 'table' then r.fires = {} end
  return r
end

-- The first firing of every-schedule @r strictly after @after.
local function sched_after(r, after)
  local k = math.floor((after - r.anchor) / r.every) + 1
  if k < 1 then k = 1 end
  return r.anchor + k * r.every
end

-- Drops the cron firings at or before @now; returns the latest of them (or nil) and
-- how many there were. Marks the list low when it runs short.
function sched_pass(name, r, now)
  local rest, latest, n = {}, nil, 0
  for _, t in ipairs(r.fires) do
    if type(t) == 'number' then
      if t <= now then latest, n = t, n + 1 else rest[#rest + 1] = t end
    end
  end
  r.fires = rest
  if #rest <= SCHED_LOW then
    redis.call('ZADD', K_SLOW, 0, name)
    redis.call('ZADD', K_SNEXT, 0, '')
  end
  return latest, n
end

-- @name's list needs no top-up (filled, paused, removed); the mark goes with the last.
function sched_unlow(name)
  redis.call('ZREM', K_SLOW, name)
  if redis.call('ZCARD', K_SLOW) == 0 then redis.call('ZREM', K_SNEXT, '') end
end

-- Puts @name in the next-firing set at @r's next firing (or out of it): for every,
-- the next after @now; for cron, the first listed, which may have passed (a top-up
-- must not skip what is due: claim fires it).
function sched_arm(name, r, now)
  local nxt = -1
  if r.paused then
    nxt = -1
  elseif r.every > 0 then
    nxt = sched_after(r, now)
  elseif type(r.fires[1]) == 'number' then
    nxt = r.fires[1]
  end
  if nxt >= 0 then
    redis.call('ZADD', K_SNEXT, dec(nxt), name)
  else
    redis.call('ZREM', K_SNEXT, name)
  end
  return nxt
end

-- One firing of the schedule @name, due since @at: enqueues one task with id
-- NAME@<firing ms> (its due time is @now) unless a task with that id exists, and
-- moves the schedule on. Catch-up: of the firings missed since @at only the latest
-- runs; the others are counted in missed. Returns the next firing, or -1.
local function sched_fire_one(cfg, name, at, now)
  local r = sched_decode(redis.call('HGET', K_SDEFS, name))
  local tpl = redis.call('HGET', K_STPL, name)
  local t = tpl and env_template(tpl, '')
  if not r or not t or r.paused then
    redis.call('ZREM', K_SNEXT, name) -- malformed or paused: it stops; ls shows it
    return -1
  end
  local fire, n = at, 1
  if r.every > 0 then
    fire = r.anchor + math.floor((now - r.anchor) / r.every) * r.every
    if fire < at then fire = at end
    n = math.floor((fire - at) / r.every) + 1
  else
    local latest, k = sched_pass(name, r, now)
    if latest then fire, n = latest, k end
  end
  local id = name .. '@' .. dec(fire)
  if not ids_get(id) and redis.call('HEXISTS', K_RUNNING, 'c:' .. id) == 0 and
      redis.call('HEXISTS', K_FAILED, 'c:' .. id) == 0 then
    local seq = redis.call('INCRBY', K_SEQ, 1)
    redis.call('HINCRBY', K_STATS, 'enqueued', 1)
    roll.add('e', 1)
    local m = t.m
    local maxf = t.max_default and p_uint(cfg.max_attempts) or
      string.sub(m, t.max_at, t.dl_at - 1)
    local dlf = t.dl and p_u64(now + t.dl) or '\192'
    -- env_fill with the id spliced in where the template has nil (byte 12)
    redis.call('ZADD', K_SCHED, dec(now), t.head .. p_u64(seq) .. p_str(id) ..
      string.sub(m, 13, t.attempt_at) .. p_u64(now) .. maxf .. dlf ..
      string.sub(m, t.payload_at))
    redis.call('HSET', K_IDS, id, dec(now) .. ':' .. dec(seq))
  end
  r.last, r.last_id, r.late, r.missed = fire, id, now - at, n - 1
  r.runs = (r.runs or 0) + 1
  redis.call('HSET', K_SDEFS, name, cjson.encode(r))
  return sched_arm(name, r, now)
end

-- Fires the schedules that are due (at most SCHED_FIRE_MAX); returns the earliest
-- firing still to come (-1: none) and how many fired. A queue without schedules pays
-- one ZRANGE on a missing key.
function sched_fire(cfg, now)
  local z = redis.call('ZRANGE', K_SNEXT, 0, SCHED_FIRE_MAX, 'WITHSCORES')
  local soonest, fired = -1, 0
  for i = 1, #z, 2 do
    local nxt = tonumber(z[i + 1])
    if z[i] == '' then
      nxt = -1 -- the top-up mark (K_SLOW), not a schedule
    elseif nxt <= now and fired < SCHED_FIRE_MAX then
      nxt = sched_fire_one(cfg, z[i], nxt, now)
      fired = fired + 1
    end
    if nxt >= 0 and (soonest < 0 or nxt < soonest) then soonest = nxt end
  end
  return soonest, fired
end

-- The earliest next firing, or -1, and 1 when a cron list wants a top-up (else 0).
function sched_soonest()
  local f = redis.call('ZRANGE', K_SNEXT, 0, 1, 'WITHSCORES')
  if f[1] == '' then return tonumber(f[4]) or -1, 1 end
  return tonumber(f[2]) or -1, 0
end
end -- schedules
