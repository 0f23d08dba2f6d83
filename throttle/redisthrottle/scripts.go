package redisthrottle

import "github.com/redis/go-redis/v9"

// The Lua scripts. Each runs atomically in Redis, is sent once and then run by its SHA1
// (EVALSHA; go-redis falls back to EVAL when Redis has lost its script cache, as after a
// restart), and touches only the two keys of one limiter, which share a hash tag, so it also runs
// on Redis Cluster.
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
//	s   1 while in slow start (doubling), 0 after the first cut
//	p   time of the last probe (µs); no probe before p + probe interval
//	b   the rate set by the last cut or advertisement: the base of the additive steps
//	k   probes since the last cut
//	e   end of the current epoch: throttles before it do not cut again (µs)
//	w   start of the success meter's current one-second window (µs)
//	c0  successes reported in the current window, c1 in the previous one
//	m0  when the meter started (µs)

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
//	ARGV[10] probe interval (µs)   ARGV[11] additive step (fraction of b)
//	ARGV[12] lifetime of learned state (ms)
//	ARGV[13] process id ("" : no registration this call)   ARGV[14] live window (µs)
//
// It returns {delay µs, booked slot t µs, interval µs, rate in µ-requests/s, live processes
// (0 when not counted)}.
var reserveScript = redis.NewScript(`
local now = tonumber(ARGV[1])
if now == 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
local key = KEYS[1]
local burst = tonumber(ARGV[4])
local f = redis.call('HMGET', key, 't', 'pu', 'r', 'h', 's', 'p', 'b', 'k', 'w', 'c0', 'c1', 'm0')
local tat = tonumber(f[1]) or 0
local pu = tonumber(f[2]) or 0
local interval, rate
local learning = ARGV[2] == '1'
if not learning then
  interval = tonumber(ARGV[3])
  rate = 1000000 / interval
else
  local ok = tonumber(ARGV[5])
  local adv = tonumber(ARGV[6])
  local lo, hi = tonumber(ARGV[8]), tonumber(ARGV[9])
  local probe, step = tonumber(ARGV[10]), tonumber(ARGV[11])
  rate = tonumber(f[3])
  local h, s, p, b, k, w, c0, c1, m0
  if rate == nil then
    rate = tonumber(ARGV[7])
    h, s, p, b, k, w, c0, c1, m0 = 0, 1, now, rate, 0, now, 0, 0, now
  else
    h = tonumber(f[4]) or 0
    s = tonumber(f[5]) or 0
    p = tonumber(f[6]) or now
    b = tonumber(f[7]) or rate
    k = tonumber(f[8]) or 0
    w = tonumber(f[9]) or now
    c0 = tonumber(f[10]) or 0
    c1 = tonumber(f[11]) or 0
    m0 = tonumber(f[12]) or now
  end
  if now - w >= 1000000 then
    local n = math.floor((now - w) / 1000000)
    if n == 1 then c1 = c0 else c1 = 0 end
    c0 = 0
    w = w + n * 1000000
  end
  c0 = c0 + ok
  if adv > 0 and adv ~= h then
    h, rate, b, k, s, p = adv, adv, adv, 0, 0, now
  end
  -- probe upwards only while the pace is what holds requests back (the last booked slot is at
  -- most one interval old) and responses are coming back, once per probe interval for all
  -- processes together
  if ok > 0 and now - p >= probe and tat + 1000000 / rate >= now then
    if s == 1 then
      rate = rate * 2
    else
      k = k + 1
      rate = rate + b * step * (1 + k / 16)
    end
    p = now
  end
  if h > 0 and rate > h then rate = h end
  if h > 0 and h < lo then lo = h end
  if rate < lo then rate = lo elseif rate > hi then rate = hi end
  interval = math.ceil(1000000 / rate)
  redis.call('HSET', key, 'r', rate, 'h', h, 's', s, 'p', string.format('%d', p), 'b', b,
    'k', k, 'w', string.format('%d', w), 'c0', c0, 'c1', c1, 'm0', string.format('%d', m0))
end
local base = math.max(tat, now, pu)
local booked = base + interval
local delay = booked - burst * interval - now
if delay < 0 then delay = 0 end
redis.call('HSET', key, 't', string.format('%d', booked))
if learning then
  redis.call('PEXPIRE', key, ARGV[12])
else
  redis.call('PEXPIRE', key, math.floor((math.max(booked, pu) - now) / 1000) + 1)
end
local live = 0
if ARGV[13] ~= '' then
  local win = tonumber(ARGV[14])
  redis.call('ZADD', KEYS[2], string.format('%d', now), ARGV[13])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('(%d', now - win))
  redis.call('PEXPIRE', KEYS[2], math.floor(win / 1000) + 1)
  live = redis.call('ZCARD', KEYS[2])
end
return {delay, booked, interval, math.floor(rate * 1000000 + 0.5), live}
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
// and a learning limiter cuts the shared rate, once per epoch.
//
//	KEYS[1] state hash
//	ARGV[1] now (µs) or 0 for Redis TIME
//	ARGV[2] mode: 0 known rate, 1 learning
//	ARGV[3] Retry-After (µs, 0: none)
//	ARGV[4] multiplicative cut (the rate is multiplied by at least this)
//	ARGV[5] 1 - headroom   ARGV[6] min rate (or the advertised rate, when lower)
//	ARGV[7] epoch grace (µs)
//	ARGV[8] lifetime of learned state (ms)
//
// The new rate is the rate of successes in the last second (as the processes reported them) times
// 1 - headroom, kept between cut*rate and 0.98*rate; without enough successes to measure, it is
// cut*rate. Requests already booked at the old pace keep their slots (they are spread over the
// processes and cannot be moved), so the next booking starts where they would have ended at the
// new pace, and the epoch lasts until the last of them was due plus the grace.
//
// It returns {1 when the rate was cut else 0, rate in µ-requests/s (0: none learned)}.
var throttledScript = redis.NewScript(`
local now = tonumber(ARGV[1])
if now == 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
local key = KEYS[1]
local f = redis.call('HMGET', key, 't', 'pu', 'r', 'e', 'w', 'c0', 'c1', 'm0', 'h')
local tat = tonumber(f[1]) or 0
local pu = tonumber(f[2]) or 0
local ra = tonumber(ARGV[3])
local learning = ARGV[2] == '1'
if ra > 0 and now + ra > pu then
  pu = now + ra
  redis.call('HSET', key, 'pu', string.format('%d', pu))
  local ttl = math.floor((pu - now) / 1000) + 1
  if learning then ttl = math.max(ttl, tonumber(ARGV[8])) end
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
local rate = tonumber(f[3])
if not learning or rate == nil then return {0, 0} end
local e = tonumber(f[4]) or 0
if now < e then return {0, math.floor(rate * 1000000 + 0.5)} end
local w = tonumber(f[5]) or now
local c0 = tonumber(f[6]) or 0
local c1 = tonumber(f[7]) or 0
local m0 = tonumber(f[8]) or now
local el = now - w
local cnt = 0
if el < 1000000 then
  cnt = c0 + c1 * (1000000 - el) / 1000000
elseif el < 2000000 then
  cnt = c0 * (2000000 - el) / 1000000
end
local span = math.min(1000000, now - m0)
local nr = rate * tonumber(ARGV[4])
if cnt >= 5 and span >= 200000 then
  local est = cnt * 1000000 / span * tonumber(ARGV[5])
  nr = math.max(nr, math.min(est, rate * 0.98))
end
local lo = tonumber(ARGV[6])
local h = tonumber(f[9]) or 0
if h > 0 and h < lo then lo = h end
nr = math.max(nr, lo)
if nr > rate then nr = rate end
local grace = tonumber(ARGV[7])
local epoch = math.max(tat, now) + grace
if tat > now then
  tat = now + math.ceil((tat - now) * rate / nr)
  redis.call('HSET', key, 't', string.format('%d', tat))
end
redis.call('HSET', key, 'r', nr, 'b', nr, 'k', 0, 's', 0, 'e', string.format('%d', epoch),
  'p', string.format('%d', epoch))
redis.call('PEXPIRE', key, math.max(tonumber(ARGV[8]), math.floor((math.max(tat, pu) - now) / 1000) + 1))
return {1, math.floor(nr * 1000000 + 0.5)}
`)
