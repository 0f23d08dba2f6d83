-- steady redisstore: decide every check of one request, all-or-nothing, atomically.
-- Mirrors package algorithm's integer-nanosecond arithmetic in integer microseconds; every number
-- stays below 2^53 within the bounds the Go side enforces (bounds.go), so doubles are exact.
--
-- ARGV[1]: decision time in µs since the epoch, or "" to read Redis TIME.
-- ARGV[2]: the least time to live of a written state, µs (with the caller's clock).
-- ARGV[3]: number of checks. Then 9 values per check:
--   kind, n, flag (0: enforce, 1: advisory, 2: charge), maxdelay µs (-1: none), limit, burst, window µs,
--   publish limit (0: no publish algorithm), publish burst.
-- KEYS: per check its state key (a string: three integers a, b, c), and for the sliding log
-- (kind 4) its sorted-set key.
-- A charge is committed whatever the decision (the state may go beyond the limit: a debt that
-- denies until it has drained), for admissions made elsewhere while Redis was away; it never
-- blocks the other checks.
-- Reply: 11 integers per check: allowed, remaining, reset µs, retry µs (-1 never, -2 over its
-- max delay), delay µs, the same five for the publish algorithm, committed (0/1).

local NEVER = -1
local OVERDUE = -2
local TOKEN, LEAKY, FIXED, LOG, SLIDING = 1, 2, 3, 4, 5

-- floor(a/b) and ceil(a/b) for integers a >= 0, b > 0, corrected for the rounding of a/b.
local function fdiv(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then q = q - 1 elseif r >= b then q = q + 1 end
  return q
end
local function cdiv(a, b)
  local q = fdiv(a, b)
  if q * b < a then q = q + 1 end
  return q
end
local function fmt(x) return string.format('%.0f', x) end

local now
if ARGV[1] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
else
  now = tonumber(ARGV[1])
end
local t = now

-- Which algorithms this request uses: only their functions are made (each local function is a
-- closure created on every run of the script).
local minttl = tonumber(ARGV[2])
local nchecks = tonumber(ARGV[3])
local used = {}
for i = 1, nchecks do used[tonumber(ARGV[3 + (i - 1) * 9 + 1])] = true end

local deficit, bucket_decide, bucket_commit
local fw_count, fw_decide, fw_commit
local sw_counts, sw_decide, sw_commit
local log_view, log_decide, log_commit

if used[TOKEN] or used[LEAKY] then
  -- buckets: st.a = time of the deficit (µs), st.b = deficit in units where a request is W.
  function deficit(st, L)
    local last = math.max(st.a, 0)
    local at = math.max(t, last)
    local d = st.b
    if d <= 0 then return at, 0 end
    local el = at - last
    if el >= cdiv(d, L) then return at, 0 end
    return at, d - el * L
  end

  function bucket_decide(st, n, L, B, W, delay)
    local at, d = deficit(st, L)
    local full = B * W
    local rel = at - t
    if n > B then
      return 0, fdiv(math.max(full - d, 0), W), rel + cdiv(d, L), NEVER, 0
    end
    local nw = n * W
    if d <= full - nw then
      local need = d + nw
      local dl = 0
      if delay then dl = rel + cdiv(need - W, L) end
      return 1, fdiv(full - need, W), rel + cdiv(need, L), 0, dl
    end
    return 0, fdiv(math.max(full - d, 0), W), rel + cdiv(d, L), rel + cdiv(d - (full - nw), L), 0
  end

  function bucket_commit(st, n, L, W, Lidle)
    local at, d = deficit(st, L)
    st.a, st.b = at, d + n * W
    return at - t + cdiv(st.b, Lidle)
  end
end

if used[FIXED] then
  -- fixed window: st.a = window start (µs), st.b = count.
  function fw_count(st, W)
    local start = math.max(fdiv(t, W) * W, st.a)
    if start == st.a then return start, math.max(st.b, 0) end
    return start, 0
  end

  function fw_decide(st, n, L, W)
    local start, count = fw_count(st, W)
    local reset = math.max(start + W - t, 0)
    if n > L then return 0, math.max(0, L - count), reset, NEVER, 0 end
    if count <= L - n then return 1, L - count - n, reset, 0, 0 end
    return 0, math.max(0, L - count), reset, reset, 0
  end

  function fw_commit(st, n, W)
    local start, count = fw_count(st, W)
    st.a, st.b = start, count + n
    return start + W - t
  end
end

if used[SLIDING] then
  -- sliding window counter: st.a = current window start, st.b = its count, st.c = previous count.
  function sw_counts(st, W)
    local last = math.max(st.a, 0)
    local start = math.max(fdiv(t, W) * W, last)
    local e = math.max(t - start, 0)
    local diff = start - last
    if diff == 0 then return start, e, math.max(st.b, 0), math.max(st.c, 0) end
    if diff == W then return start, e, 0, math.max(st.b, 0) end
    return start, e, 0, 0
  end

  function sw_decide(st, n, L, W)
    local start, e, cur, prev = sw_counts(st, W)
    local lw = L * W
    local span = W - e
    local room
    if prev == 0 or span == 0 then
      room = lw
    elseif prev >= cdiv(lw, span) then
      room = 0
    else
      room = lw - prev * span
    end
    local fits = fdiv(room, W)
    if n <= fits and cur <= fits - n then
      return 1, fits - cur - n, start + 2 * W - t, 0, 0
    end
    local rem = math.max(0, fits - cur)
    local reset = 0
    if cur > 0 then
      reset = math.max(start + 2 * W - t, 0)
    elseif prev > 0 then
      reset = math.max(start + W - t, 0)
    end
    if n > L then return 0, rem, reset, NEVER, 0 end
    local ra
    if cur > L - n then
      ra = start + 2 * W - math.min(fdiv((L - n) * W, cur), W)
    elseif prev == 0 then
      ra = start
    else
      ra = start + W - math.min(fdiv((L - cur - n) * W, prev), W)
    end
    return 0, rem, reset, math.max(ra - t, 0), 0
  end

  function sw_commit(st, n, W)
    local start, _, cur, prev = sw_counts(st, W)
    st.a, st.b, st.c = start, cur + n, prev
    return start + 2 * W - t
  end
end

if used[LOG] then
  -- sliding log: sorted set of entries (score: admission time µs; member: running total of requests
  -- admitted up to and including that time), st.c = running total before the oldest entry.
  function log_view(zk, st, W)
    local v = {count = redis.call('ZCARD', zk), t = t, expired = 0, from = st.c, newest = st.c, newest_t = 0}
    if v.count == 0 then return v end
    local nw = redis.call('ZRANGE', zk, -1, -1, 'WITHSCORES')
    v.newest_member = nw[1]
    v.newest = tonumber(nw[1])
    v.newest_t = tonumber(nw[2])
    v.t = math.max(t, v.newest_t)
    v.expired = redis.call('ZCOUNT', zk, '-inf', fmt(v.t - W))
    if v.expired > 0 then
      v.from = tonumber(redis.call('ZRANGE', zk, v.expired - 1, v.expired - 1)[1])
    end
    return v
  end

  function log_decide(zk, v, n, L, W)
    local inwin = v.newest - v.from
    if n <= L and inwin <= L - n then
      return 1, L - inwin - n, v.t + W - t, 0, 0
    end
    local reset = 0
    if inwin > 0 then reset = math.max(v.newest_t + W - t, 0) end
    local rem = math.max(0, L - inwin)
    if n > L then return 0, rem, reset, NEVER, 0 end
    -- The oldest entries holding at least inwin+n-L requests must leave; find the last of them.
    local need = inwin + n - L
    local lo, hi = v.expired, v.count
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      local total = tonumber(redis.call('ZRANGE', zk, mid, mid)[1])
      if total - v.from < need then lo = mid + 1 else hi = mid end
    end
    local j = math.min(lo, v.count - 1)
    local e = redis.call('ZRANGE', zk, j, j, 'WITHSCORES')
    return 0, rem, reset, math.max(tonumber(e[2]) + W - t, 0), 0
  end

  function log_commit(zk, st, n, L, W)
    local v = log_view(zk, st, W)
    local left = v.count - v.expired
    if v.expired > 0 then
      redis.call('ZREMRANGEBYRANK', zk, 0, v.expired - 1)
    end
    if left == 0 then
      -- Nothing left in the window: restart the running totals (only differences matter).
      st.c = 0
      redis.call('ZADD', zk, fmt(v.t), fmt(n))
    elseif v.newest_t == v.t then
      st.c = v.from
      redis.call('ZREM', zk, v.newest_member)
      redis.call('ZADD', zk, fmt(v.t), fmt(v.newest + n))
    else
      st.c = v.from
      if left >= L then
        -- Only after a commit the decision did not allow: keep at most L entries.
        local first = redis.call('ZRANGE', zk, 0, 0)
        st.c = tonumber(first[1])
        redis.call('ZREMRANGEBYRANK', zk, 0, 0)
      end
      redis.call('ZADD', zk, fmt(v.t), fmt(v.newest + n))
    end
    return v.t + W - t
  end
end

local checks, states = {}, {}
local ki = 1
for i = 1, nchecks do
  local o = 3 + (i - 1) * 9
  local c = {
    kind = tonumber(ARGV[o + 1]), n = tonumber(ARGV[o + 2]), adv = ARGV[o + 3] ~= '0', charge = ARGV[o + 3] == '2',
    maxd = tonumber(ARGV[o + 4]), L = tonumber(ARGV[o + 5]), B = tonumber(ARGV[o + 6]),
    W = tonumber(ARGV[o + 7]), pL = tonumber(ARGV[o + 8]), pB = tonumber(ARGV[o + 9]),
  }
  c.hk = KEYS[ki]
  ki = ki + 1
  if c.kind == LOG then
    c.zk = KEYS[ki]
    ki = ki + 1
  end
  local st = states[c.hk]
  if not st then
    local a, b, cc = 0, 0, 0
    local r = redis.call('GET', c.hk)
    if r then
      local x, y, z = string.match(r, '^(%-?%d+) (%-?%d+) (%-?%d+)$')
      a, b, cc = tonumber(x) or 0, tonumber(y) or 0, tonumber(z) or 0
    end
    st = {a = a, b = b, c = cc, ttl = -1}
    states[c.hk] = st
  end
  c.st = st
  checks[i] = c
end

local function decide(c, L, B)
  local k = c.kind
  if k == TOKEN or k == LEAKY then
    return bucket_decide(c.st, c.n, L, B, c.W, k == LEAKY)
  elseif k == FIXED then
    return fw_decide(c.st, c.n, L, c.W)
  elseif k == LOG then
    if not c.view then c.view = log_view(c.zk, c.st, c.W) end
    return log_decide(c.zk, c.view, c.n, L, c.W)
  elseif k == SLIDING then
    return sw_decide(c.st, c.n, L, c.W)
  end
  error('redisstore: unknown algorithm kind ' .. tostring(k))
end

local out = {}
local ok = true
for i, c in ipairs(checks) do
  local al, rem, reset, retry, delay = decide(c, c.L, c.B)
  if al == 1 and c.maxd >= 0 and delay > c.maxd then
    al, rem, retry = 0, 0, OVERDUE
  end
  c.allowed = al == 1 or c.charge
  if not c.allowed and not c.adv then ok = false end
  local o = (i - 1) * 11
  out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = al, rem, reset, retry, delay
  if c.pL > 0 then
    out[o + 6], out[o + 7], out[o + 8], out[o + 9], out[o + 10] = decide(c, c.pL, c.pB)
  else
    out[o + 6], out[o + 7], out[o + 8], out[o + 9], out[o + 10] = al, rem, reset, retry, delay
  end
  out[o + 11] = 0
end

if ok then
  for i, c in ipairs(checks) do
    if c.allowed then
      local ttl
      local k = c.kind
      if k == TOKEN or k == LEAKY then
        local lidle = c.L
        if c.pL > 0 and c.pL < lidle then lidle = c.pL end
        ttl = bucket_commit(c.st, c.n, c.L, c.W, lidle)
      elseif k == FIXED then
        ttl = fw_commit(c.st, c.n, c.W)
      elseif k == LOG then
        ttl = log_commit(c.zk, c.st, c.n, c.L, c.W)
        c.st.zk = c.zk
      else
        ttl = sw_commit(c.st, c.n, c.W)
      end
      c.st.ttl = math.max(c.st.ttl, ttl)
      out[(i - 1) * 11 + 11] = 1
    end
  end
  -- Write every committed state and let it expire when it is back at its initial state.
  for hk, st in pairs(states) do
    if st.ttl >= 0 then
      local ms = math.max(cdiv(math.max(st.ttl, minttl), 1000), 1)
      redis.call('SET', hk, string.format('%.0f %.0f %.0f', st.a, st.b, st.c), 'PX', fmt(ms))
      if st.zk then redis.call('PEXPIRE', st.zk, fmt(ms)) end
    end
  end
end
return out
