package redisthrottle

import "github.com/redis/go-redis/v9"

// The Lua scripts. Each runs atomically in Redis, is sent once and then run by its SHA1
// (EVALSHA; go-redis falls back to EVAL when Redis has lost its script cache, as after a
// restart), and touches only the keys of one limiter, which share a hash tag, so it also runs on
// Redis Cluster.
//
// Time is Redis TIME in microseconds since the Unix epoch (or ARGV[1] when the caller passes an
// explicit time, which tests do). Lua computes in doubles, exact for integers up to 2^53 (about
// 9.0e15 µs, the year 2255); every stored time is written with %d so none is rounded on its way
// to a string. Rates are doubles written by Redis with 17 significant digits, which read back
// exactly.
//
// Fields of the state hash:
//
//	t   GCRA theoretical arrival time: the slot after the last booked request (µs)
//	pu  shared pause: no request is booked before it (µs)
//	r   learned rate (requests/s)
//	h   rate advertised by the server, after headroom (0: none)
//	s   1 while in slow start (before the first cut or advertised rate), else 0
//	m   the server's rate is below this: the rate that drew a throttle, or what the server
//	    admitted between blackouts (0: not known yet)
//	n   cuts since the last reported success (more than one: a blackout)
//	cc  cuts so far: the epoch; a throttle cuts only if its request was booked in the current one
//	g   when the rate last changed (µs)
//	sc  successes reported so far
//	be  when the last blackout ended (µs, 0: none yet), bs the successes reported by then
//	mt  the success meter, packed with cmsgpack: {start of the current bucket (µs), index of the
//	    current bucket, start of the meter (µs), 20 counts of 100 ms buckets}
//
// The learning law (rates in requests per second) is driven by the successes the processes
// report, so that N processes together move the shared rate as fast as one process sending as much
// would, not N times faster. Per reported success, while the pace binds (the last booked slot is
// at most one interval old):
//   - in slow start the rate grows by 2^(1/(rate*0.1 s)): it doubles every 100 ms at full use;
//   - after a cut it recovers towards 98% of m, closing the gap by 1/(rate*0.3 s) of it (a time
//     constant of 0.3 s at full use), and above that probes by 1% of m per second at full use;
//   - it never exceeds the advertised rate h, nor the maximum, nor goes below the minimum (or h,
//     when h is lower).
//
// When the rate changes, slots booked beyond now are re-spaced at the new rate: the next booking
// starts where the booked requests end at the new pace (each process moves its own waiting
// reservations likewise, see Limiter).

// scriptPrelude is shared by the scripts that need the time and the success meter.
const scriptPrelude = `
local now = tonumber(ARGV[1])
if now == 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
local function int(x) return string.format('%d', x) end
local BW, NB = 100000, 20
-- meter returns the success meter unpacked from raw and advanced to now.
local function meter(raw)
  local m
  if raw then
    local okk, v = pcall(cmsgpack.unpack, raw)
    if okk then m = v end
  end
  if type(m) ~= 'table' or #m ~= NB + 3 then
    m = {now, 1, now}
    for i = 1, NB do m[3 + i] = 0 end
    return m
  end
  if now >= m[1] + BW then
    local k = math.floor((now - m[1]) / BW)
    if k >= NB then
      for i = 1, NB do m[3 + i] = 0 end
    else
      for j = 1, k do
        m[2] = m[2] % NB + 1
        m[3 + m[2]] = 0
      end
    end
    m[1] = m[1] + k * BW
  end
  return m
end
-- bucket is the count of the bucket j buckets before the current one.
local function bucket(m, j) return m[3 + ((m[2] - 1 - j) % NB) + 1] end
-- meter_rate returns the successes in the last second (the current partial bucket, the nine
-- before it and the part of the tenth that falls in the second) and the span they cover.
local function meter_rate(m)
  local cnt = 0
  for j = 0, 9 do cnt = cnt + bucket(m, j) end
  cnt = cnt + bucket(m, 10) * (BW - (now - m[1])) / BW
  return cnt, math.min(1000000, now - m[3])
end
-- meter_peak returns the most successes in any ten consecutive complete buckets (one second).
local function meter_peak(m)
  local best = 0
  for s = 1, NB - 10 do
    local c = 0
    for j = 0, 9 do c = c + bucket(m, s + j) end
    if c > best then best = c end
  end
  return best
end
`

// reserveScript books one request.
//
//	KEYS[1] state hash, KEYS[2] live-process sorted set
//	ARGV[1] now (µs) or 0 for Redis TIME
//	ARGV[2] mode: 0 known rate, 1 learning
//	ARGV[3] interval (µs, known rate)
//	ARGV[4] burst
//	ARGV[5] successes this process saw since its last call
//	ARGV[6] advertised rate after headroom (0: none)
//	ARGV[7] initial rate   ARGV[8] min rate   ARGV[9] max rate
//	ARGV[10] lifetime of learned state (ms)
//	ARGV[11] process id ("" : no registration this call)   ARGV[12] live window (µs)
//	ARGV[13] not due before now plus this (µs): the end of the process's local schedule after a
//	         fallback, so that the two schedules do not overlap
//
// A reported success after a blackout ends it: what the server admitted lately bounds its rate
// (the most successes in any second of the meter and, when the previous blackout ended between
// 0.5 s and 5 s ago, the successes since then over that time, which for a fixed window is its
// quota per window), and m is lowered to that when it is lower.
//
// It returns {delay µs, booked slot t µs, interval µs, rate in µ-requests/s, live processes
// (0 when not counted), epoch cc, µs since the rate last changed}.
var reserveScript = redis.NewScript(scriptPrelude + `
local key = KEYS[1]
local burst = tonumber(ARGV[4])
local f = redis.call('HMGET', key, 't', 'pu', 'r', 'h', 's', 'm', 'n', 'cc', 'sc', 'be', 'bs', 'mt', 'g')
local tat = tonumber(f[1]) or 0
local pu = tonumber(f[2]) or 0
local interval, rate
local g = tonumber(f[13]) or now
local learning = ARGV[2] == '1'
if not learning then
  interval = tonumber(ARGV[3])
  rate = 1000000 / interval
else
  local ok = tonumber(ARGV[5])
  local adv = tonumber(ARGV[6])
  local lo, hi = tonumber(ARGV[8]), tonumber(ARGV[9])
  rate = tonumber(f[3])
  local h, s, m, n, sc, be, bs
  if rate == nil then
    rate = tonumber(ARGV[7])
    h, s, m, n, sc, be, bs = 0, 1, 0, 0, 0, 0, 0
  else
    h = tonumber(f[4]) or 0
    s = tonumber(f[5]) or 0
    m = tonumber(f[6]) or 0
    n = tonumber(f[7]) or 0
    sc = tonumber(f[9]) or 0
    be = tonumber(f[10]) or 0
    bs = tonumber(f[11]) or 0
  end
  local mt = meter(f[12])
  local old = rate
  if ok > 0 then
    mt[3 + mt[2]] = mt[3 + mt[2]] + ok
    sc = sc + ok
    if n > 1 then
      local admitted = meter_peak(mt)
      local d = now - be
      if be > 0 and d >= 500000 and d <= 5000000 then
        admitted = math.min(admitted, (sc - bs) * 1000000 / d)
      end
      if admitted >= 8 and admitted < m then m = admitted end
      be, bs = now, sc
    end
    n = 0
  end
  if adv > 0 and adv ~= h then
    h = adv
    if s == 1 then rate, s = adv, 0 end
  end
  local ceil = hi
  if h > 0 and h < ceil then ceil = h end
  if ok > 0 and tat + 1000000 / rate >= now then
    if s == 1 then
      rate = rate * math.min(2, 2 ^ (ok / (rate * 0.1)))
    else
      local target = ceil
      if m > 0 and m * 0.98 < target then target = m * 0.98 end
      if rate < target then
        rate = rate + (target - rate) * math.min(1, ok / (rate * 0.3))
        if target - rate < target * 0.001 then rate = target end
      elseif m > 0 then
        rate = rate + m * 0.01 * ok / rate
      end
    end
  end
  if rate > ceil then rate = ceil end
  if h > 0 and h < lo then lo = h end
  if rate < lo then rate = lo end
  if rate ~= old then
    g = now
    if tat > now then tat = now + math.ceil((tat - now) * old / rate) end
  end
  interval = math.ceil(1000000 / rate)
  redis.call('HSET', key, 'r', rate, 'h', h, 's', s, 'm', m, 'n', n, 'sc', sc, 'be', int(be),
    'bs', bs, 'mt', cmsgpack.pack(mt), 'g', int(g))
end
local base = math.max(tat, now, pu)
local booked = base + interval
local floor = tonumber(ARGV[13])
if floor > 0 and booked - burst * interval < now + floor then booked = now + floor + burst * interval end
local delay = booked - burst * interval - now
if delay < 0 then delay = 0 end
redis.call('HSET', key, 't', int(booked))
if learning then
  redis.call('PEXPIRE', key, ARGV[10])
else
  redis.call('PEXPIRE', key, math.floor((math.max(booked, pu) - now) / 1000) + 1)
end
local live = 0
if ARGV[11] ~= '' then
  local win = tonumber(ARGV[12])
  redis.call('ZADD', KEYS[2], int(now), ARGV[11])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. int(now - win))
  redis.call('PEXPIRE', KEYS[2], math.floor(win / 1000) + 1)
  live = redis.call('ZCARD', KEYS[2])
end
return {delay, booked, interval, math.floor(rate * 1000000 + 0.5), live, tonumber(f[8]) or 0, now - g}
`)

// cancelScript gives a booked slot back when no later request was booked after it (the state's t
// is still the slot's): t moves back by the slot's interval. Otherwise the slot is lost, which
// errs on the slow side. It needs no time.
//
//	KEYS[1] state hash; ARGV[1] booked slot t (µs); ARGV[2] its interval (µs)
//
// It returns 1 when the slot was given back, 0 when not.
var cancelScript = redis.NewScript(`
local t = tonumber(redis.call('HGET', KEYS[1], 't'))
if t ~= nil and t == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 't', string.format('%d', t - tonumber(ARGV[2])))
  return 1
end
return 0
`)

// throttledScript reports a throttled response: a Retry-After pauses the key for every process,
// and a learning limiter cuts the shared rate, once per epoch: only a throttle for a request
// booked after the last cut (in epoch cc, as the reserve script told the process) cuts, so the
// requests that were already booked or in flight at the old pace, whichever process holds them,
// cut once between them.
//
//	KEYS[1] state hash
//	ARGV[1] now (µs) or 0 for Redis TIME
//	ARGV[2] mode: 0 known rate, 1 learning
//	ARGV[3] Retry-After to share (µs, 0: none)
//	ARGV[4] min rate (or the advertised rate, when lower)
//	ARGV[5] the epoch the throttled request was booked in
//	ARGV[6] lifetime of learned state (ms)
//
// The cut (rate r before it): by 10%, or to 98% of the rate of successes reported over the last
// second when that is lower (with at least 8 of them), but at most by half, except at the end of
// the slow start, whose doubling can overshoot the server's rate many times over. A second cut with no
// success reported since the first (a blackout: the server admits nothing for now, as in an
// exhausted window) halves the rate and leaves m alone. Otherwise m becomes r, the rate that drew
// the throttle, unless the server admitted more than r/0.9 in some second of the meter lately:
// then this throttle is what is left of an earlier excess (a window still full of it) and m stays.
// Slots booked beyond now are re-spaced at the new rate, and a new epoch begins.
//
// It returns {1 when the rate was cut else 0, rate in µ-requests/s (0: none learned), epoch,
// µs since the rate last changed}.
var throttledScript = redis.NewScript(scriptPrelude + `
local key = KEYS[1]
local f = redis.call('HMGET', key, 't', 'pu', 'r', 'cc', 'h', 'n', 'm', 'mt', 'g', 's')
local tat = tonumber(f[1]) or 0
local pu = tonumber(f[2]) or 0
local ra = tonumber(ARGV[3])
local learning = ARGV[2] == '1'
local ttl = tonumber(ARGV[6])
if ra > 0 and now + ra > pu then
  pu = now + ra
  redis.call('HSET', key, 'pu', int(pu))
  local need = math.floor((pu - now) / 1000) + 1
  if learning and ttl > need then need = ttl end
  if redis.call('PTTL', key) < need then redis.call('PEXPIRE', key, need) end
end
local rate = tonumber(f[3])
if not learning or rate == nil then return {0, 0, 0, 0} end
local cc = tonumber(f[4]) or 0
if tonumber(ARGV[5]) ~= cc then return {0, math.floor(rate * 1000000 + 0.5), cc, now - (tonumber(f[9]) or now)} end
local run = (tonumber(f[6]) or 0) + 1
local m = tonumber(f[7]) or 0
local nr
if run > 1 then
  nr = rate * 0.5
else
  local mt = meter(f[8])
  local cnt, span = meter_rate(mt)
  local peak = meter_peak(mt)
  if peak < 8 or rate >= peak * 0.9 or m == 0 then m = rate end
  nr = rate * 0.9
  if cnt >= 8 and span >= 200000 then
    nr = math.min(nr, cnt * 1000000 / span * 0.98)
  end
  if tonumber(f[10]) ~= 1 then nr = math.max(nr, rate * 0.5) end
end
local lo = tonumber(ARGV[4])
local h = tonumber(f[5]) or 0
if h > 0 and h < lo then lo = h end
nr = math.max(nr, lo)
if nr > rate then nr = rate end
if tat > now then
  tat = now + math.ceil((tat - now) * rate / nr)
  redis.call('HSET', key, 't', int(tat))
end
redis.call('HSET', key, 'r', nr, 'm', m, 'n', run, 's', 0, 'cc', cc + 1, 'g', int(now))
local need = math.floor((math.max(tat, pu) - now) / 1000) + 1
if ttl > need then need = ttl end
redis.call('PEXPIRE', key, need)
return {1, math.floor(nr * 1000000 + 0.5), cc + 1, 0}
`)
