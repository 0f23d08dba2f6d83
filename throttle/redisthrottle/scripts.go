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
// Fields of the state hash (docs/shared-learner.md):
//
//	t   GCRA theoretical arrival time: the slot after the last booked request (µs)
//	pu  shared pause: no request is booked before it (µs)
//	sc  successes the processes reported (learning)
//	law the learner's rate law (learn.RateLaw, encoded), lv its version: written only by
//	    lawScript, when lv is still the version the writer read
//	r   the pace the law asks for (requests/s), s 1 while it has not been throttled (startup)
//	h   the rate the server's headers declare, after headroom (0: none)
//	e   the pace slots were last booked at: min(r, h), or h during the startup when h is set
//	g   when e last changed (µs)
//	cv  when the law last cut (µs): Redis's clock, so it only grows, even across a forgotten state
//
// No learning happens in Lua: the law runs in Go (see Limiter.advance), on the state read from
// here, and is written back atomically. The scripts book slots, count successes and re-space the
// slots booked beyond now when the pace changes: the next booking starts where the booked requests
// end at the new pace (each process moves its own waiting reservations likewise, see Limiter).

// scriptPrelude is shared by the scripts that need the time and the learned pace.
const scriptPrelude = `
local now = tonumber(ARGV[1])
if now == 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
local function int(x) return string.format('%d', x) end
-- pace is the rate slots are booked at: the law's, capped by the declared rate, which replaces the
-- startup's pace when it is said.
local function pace(r, s, h)
  if h > 0 and (s == 1 or r > h) then return h end
  return r
end
-- respace moves the booked slots beyond now from the pace old to new and returns the new t.
local function respace(tat, old, new)
  if old ~= new and tat > now then return now + math.ceil((tat - now) * old / new) end
  return tat
end
`

// reserveScript books one request.
//
//	KEYS[1] state hash, KEYS[2] live-process set
//	ARGV[1] now (µs) or 0 for Redis TIME
//	ARGV[2] mode: 0 known rate, 1 learning
//	ARGV[3] interval (µs, known rate)
//	ARGV[4] burst
//	ARGV[5] successes this process saw since its last call
//	ARGV[6] declared rate after headroom (0: none said)
//	ARGV[7] initial rate
//	ARGV[8] lifetime of learned state (ms)
//	ARGV[9] process id ("" : no registration this call)   ARGV[10] live window (µs)
//	ARGV[11] not due before now plus this (µs): the end of the process's local schedule after a
//	         fallback, so that the two schedules do not overlap
//
// It returns {delay µs, booked slot t µs, interval µs, pace in µ-requests/s, live processes (0
// when not counted), successes reported sc, law version lv, now µs, µs since the pace last changed,
// the time of the law's last cut cv (µs, 0: none)}.
var reserveScript = redis.NewScript(scriptPrelude + `
local key = KEYS[1]
local burst = tonumber(ARGV[4])
local f = redis.call('HMGET', key, 't', 'pu', 'r', 's', 'h', 'e', 'g', 'sc', 'lv', 'cv')
local tat = tonumber(f[1]) or 0
local pu = tonumber(f[2]) or 0
local interval, rate
local g = tonumber(f[7]) or now
local sc, lv = 0, tonumber(f[9]) or 0
local learning = ARGV[2] == '1'
if not learning then
  interval = tonumber(ARGV[3])
  rate = 1000000 / interval
else
  local ok = tonumber(ARGV[5])
  sc = tonumber(f[8]) or 0
  if ok > 0 then sc = redis.call('HINCRBY', key, 'sc', ok) end
  local h = tonumber(f[5]) or 0
  local adv = tonumber(ARGV[6])
  if adv > 0 and adv ~= h then
    h = adv
    redis.call('HSET', key, 'h', adv)
  end
  rate = pace(tonumber(f[3]) or tonumber(ARGV[7]), tonumber(f[4]) or 1, h)
  local old = tonumber(f[6]) or rate
  if rate ~= old then
    g = now
    tat = respace(tat, old, rate)
    redis.call('HSET', key, 'e', rate, 'g', int(g))
  elseif f[6] == false then
    redis.call('HSET', key, 'e', rate, 'g', int(g))
  end
  interval = math.ceil(1000000 / rate)
end
local base = math.max(tat, now, pu)
local booked = base + interval
local floor = tonumber(ARGV[11])
if floor > 0 and booked - burst * interval < now + floor then booked = now + floor + burst * interval end
local delay = booked - burst * interval - now
if delay < 0 then delay = 0 end
redis.call('HSET', key, 't', int(booked))
if learning then
  redis.call('PEXPIRE', key, ARGV[8])
else
  redis.call('PEXPIRE', key, math.floor((math.max(booked, pu) - now) / 1000) + 1)
end
local live = 0
if ARGV[9] ~= '' then
  local win = tonumber(ARGV[10])
  redis.call('ZADD', KEYS[2], int(now), ARGV[9])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. int(now - win))
  redis.call('PEXPIRE', KEYS[2], math.floor(win / 1000) + 1)
  live = redis.call('ZCARD', KEYS[2])
end
return {delay, booked, interval, math.floor(rate * 1000000 + 0.5), live, sc, lv, now, now - g, tonumber(f[10]) or 0}
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

// pauseScript shares a Retry-After: no request of any process is booked before now plus it.
//
//	KEYS[1] state hash
//	ARGV[1] now (µs) or 0 for Redis TIME
//	ARGV[2] Retry-After (µs)
//	ARGV[3] lifetime of learned state (ms; 0 with a known rate)
//
// It returns 1 when the pause was extended, 0 when a longer one was running.
var pauseScript = redis.NewScript(scriptPrelude + `
local key = KEYS[1]
local pu = tonumber(redis.call('HGET', key, 'pu')) or 0
local ra = tonumber(ARGV[2])
if now + ra <= pu then return 0 end
pu = now + ra
redis.call('HSET', key, 'pu', int(pu))
local need = math.floor(ra / 1000) + 1
local ttl = tonumber(ARGV[3])
if ttl > need then need = ttl end
if redis.call('PTTL', key) < need then redis.call('PEXPIRE', key, need) end
return 1
`)

// lawScript writes the rate law back, if no other process wrote it since it was read: a
// compare-and-set on the version lv. The slots booked beyond now are re-spaced at the new pace;
// after a cut they also move one new spacing later, so that the first is at least one spacing
// after now (the law's hold: the throttle emptied the server's quota, and a request sent at once
// would only draw another), and the cut's time is kept as cv (see Limiter.heard).
//
//	KEYS[1] state hash
//	ARGV[1] now (µs) or 0 for Redis TIME
//	ARGV[2] the version the law was read at
//	ARGV[3] the encoded law
//	ARGV[4] the pace it asks for (requests/s)
//	ARGV[5] 1 while it has not been throttled (startup), else 0
//	ARGV[6] 1 when it cut the pace
//	ARGV[7] lifetime of learned state (ms)
//	ARGV[8] when the state is new (no law in Redis): the law's count of successes less the count in
//	        Redis when the writer read it, added to sc so that the two agree (a process seeding a
//	        forgotten state with the law it holds, see Limiter.readLaw; 0 otherwise)
//
// It returns {1, the new version, pace in µ-requests/s, µs since the pace last changed, now µs}
// when written, {0, the current version} when another process wrote first.
var lawScript = redis.NewScript(scriptPrelude + `
local key = KEYS[1]
local f = redis.call('HMGET', key, 'lv', 't', 'h', 'e', 'g')
local lv = tonumber(f[1]) or 0
if lv ~= tonumber(ARGV[2]) then return {0, lv} end
-- A new state's first version is now: a process still holding a version of a forgotten state
-- can never match it.
local nv = lv + 1
if lv == 0 then
  nv = now
  local seed = tonumber(ARGV[8])
  if seed ~= 0 then redis.call('HINCRBY', key, 'sc', seed) end
end
local r, s = tonumber(ARGV[4]), tonumber(ARGV[5])
local rate = pace(r, s, tonumber(f[3]) or 0)
local old = tonumber(f[4]) or rate
local tat = respace(tonumber(f[2]) or 0, old, rate)
local g = tonumber(f[5]) or now
if rate ~= old then g = now end
if ARGV[6] == '1' then
  tat = math.max(tat, now) + math.ceil(1000000 / rate)
  redis.call('HSET', key, 'law', ARGV[3], 'lv', int(nv), 'r', r, 's', s, 'e', rate, 'g', int(g), 't', int(tat), 'cv', int(now))
else
  redis.call('HSET', key, 'law', ARGV[3], 'lv', int(nv), 'r', r, 's', s, 'e', rate, 'g', int(g), 't', int(tat))
end
redis.call('PEXPIRE', key, ARGV[7])
return {1, nv, math.floor(rate * 1000000 + 0.5), now - g, now}
`)
