-- The algorithms (after script_shared.lua), made only when their flag is set. They read the
-- decision time t, set by script_call.lua before any of them is called.
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
  local function fmt(x) return string.format(INT1, x) end

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
