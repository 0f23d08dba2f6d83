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
-- Reply, per check: allowed, remaining, reset µs, retry µs (-1 never, -2 over its max delay),
-- delay µs, committed (0/1), and when the check has a publish algorithm its five (allowed to
-- delay) after them: 6 or 11 integers.
--
-- The script runs on every decision inside Redis's single thread, so it is written for its cost
-- there (Lua 5.1): every local function is a new closure on every run, and every local of this
-- chunk it uses a new upvalue, so only the algorithms a request uses are made, they capture few
-- locals, the checks are dispatched inline, and the tables made per run are few (a state per key,
-- an entry per committing check, the reply).

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
-- cdiv repeats fdiv's body rather than calling it: one call fewer per use.
local function cdiv(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then q = q - 1 elseif r >= b then q = q + 1 end
  if q * b < a then q = q + 1 end
  return q
end

local t
if ARGV[1] == '' then
  local tm = redis.call('TIME')
  t = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
else
  t = tonumber(ARGV[1])
end

-- Which algorithms this request uses (its kinds, compared as strings): only their functions are
-- made.
local nchecks = tonumber(ARGV[3])
local buckets, fixed, sliding, logs
for o = 4, 3 + 9 * nchecks, 9 do
  local k = ARGV[o]
  if k == '1' or k == '2' then buckets = true
  elseif k == '3' then fixed = true
  elseif k == '4' then logs = true
  elseif k == '5' then sliding = true end
end

local deficit, bucket_decide, bucket_commit
local fw_count, fw_decide, fw_commit
local sw_counts, sw_decide, sw_commit
local log_view, log_decide, log_commit

if buckets then
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

if fixed then
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

if sliding then
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

if logs then
  -- sliding log: sorted set of entries (score: admission time µs; member: running total of requests
  -- admitted up to and including that time), st.c = running total before the oldest entry.
  local function fmt(x) return string.format('%.0f', x) end

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

-- Locals of the chunk from here on: no closure above captures them.
local tonumber, max, format, call, argv, keys = tonumber, math.max, string.format, redis.call, ARGV, KEYS
local minttl = tonumber(argv[2])

-- Decide every check, loading each state once (two checks may share one).
local states = {}
local commits = {} -- per check that commits if all do: {reply offset, kind, n, L, W, publish L, state, zset key}
local out = {0, 0, 0, 0, 0, 0} -- room for one check's reply without publish, the usual request
local p = 0 -- reply entries so far
local ok = true
local ki = 1
for i = 1, nchecks do
  local o = 3 + (i - 1) * 9
  local kind, n, flag = tonumber(argv[o + 1]), tonumber(argv[o + 2]), argv[o + 3]
  local maxd, L, B, W = tonumber(argv[o + 4]), tonumber(argv[o + 5]), tonumber(argv[o + 6]), tonumber(argv[o + 7])
  local pL = tonumber(argv[o + 8])
  local pB = 0
  if pL > 0 then pB = tonumber(argv[o + 9]) end
  local hk = keys[ki]
  ki = ki + 1
  local zk
  if kind == LOG then
    zk = keys[ki]
    ki = ki + 1
  end
  local st = states[hk]
  if not st then
    local a, b, cc = 0, 0, 0
    local r = call('GET', hk)
    if r then
      local x, y, z = string.match(r, '^(%-?%d+) (%-?%d+) (%-?%d+)$')
      a, b, cc = tonumber(x) or 0, tonumber(y) or 0, tonumber(z) or 0
    end
    st = {a = a, b = b, c = cc, ttl = -1}
    states[hk] = st
  end

  -- The algorithm's decision, and the publish algorithm's when there is one.
  local al, rem, reset, retry, delay, pal, prem, preset, pretry, pdelay
  if kind == TOKEN or kind == LEAKY then
    local leaky = kind == LEAKY
    al, rem, reset, retry, delay = bucket_decide(st, n, L, B, W, leaky)
    if pL > 0 then pal, prem, preset, pretry, pdelay = bucket_decide(st, n, pL, pB, W, leaky) end
  elseif kind == FIXED then
    al, rem, reset, retry, delay = fw_decide(st, n, L, W)
    if pL > 0 then pal, prem, preset, pretry, pdelay = fw_decide(st, n, pL, W) end
  elseif kind == LOG then
    local view = log_view(zk, st, W)
    al, rem, reset, retry, delay = log_decide(zk, view, n, L, W)
    if pL > 0 then pal, prem, preset, pretry, pdelay = log_decide(zk, view, n, pL, W) end
  elseif kind == SLIDING then
    al, rem, reset, retry, delay = sw_decide(st, n, L, W)
    if pL > 0 then pal, prem, preset, pretry, pdelay = sw_decide(st, n, pL, W) end
  else
    error('redisstore: unknown algorithm kind ' .. tostring(kind))
  end
  if al == 1 and maxd >= 0 and delay > maxd then
    al, rem, retry = 0, 0, OVERDUE
  end
  if al == 1 or flag == '2' then
    commits[#commits + 1] = {p + 6, kind, n, L, W, pL, st, zk}
  elseif flag == '0' then
    ok = false
  end
  out[p + 1], out[p + 2], out[p + 3], out[p + 4], out[p + 5], out[p + 6] = al, rem, reset, retry, delay, 0
  p = p + 6
  if pL > 0 then
    out[p + 1], out[p + 2], out[p + 3], out[p + 4], out[p + 5] = pal, prem, preset, pretry, pdelay
    p = p + 5
  end
end

if ok then
  for _, c in ipairs(commits) do
    local kind, n, L, W, st = c[2], c[3], c[4], c[5], c[7]
    local ttl
    if kind == TOKEN or kind == LEAKY then
      local lidle, pL = L, c[6]
      if pL > 0 and pL < lidle then lidle = pL end
      ttl = bucket_commit(st, n, L, W, lidle)
    elseif kind == FIXED then
      ttl = fw_commit(st, n, W)
    elseif kind == LOG then
      ttl = log_commit(c[8], st, n, L, W)
      st.zk = c[8]
    else
      ttl = sw_commit(st, n, W)
    end
    st.ttl = max(st.ttl, ttl)
    out[c[1]] = 1
  end
  -- Write every committed state and let it expire when it is back at its initial state.
  for hk, st in pairs(states) do
    if st.ttl >= 0 then
      local ms = format('%.0f', max(cdiv(max(st.ttl, minttl), 1000), 1))
      call('SET', hk, format('%.0f %.0f %.0f', st.a, st.b, st.c), 'PX', ms)
      if st.zk then call('PEXPIRE', st.zk, ms) end
    end
  end
end
return out
