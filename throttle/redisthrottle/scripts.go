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
// exactly. The slot clock counts µ-slots (1e6 a slot) and grows by 1e6 times the pace a second:
// exact in doubles for 2^53 µ-slots, 104 days of a busy key at 1,000 requests a second (the state
// starts over when it is forgotten, after WithForget idle). Replies carry the pace rounded to
// 1e-6 requests a second, a placement error of under a microsecond a slot.
//
// Fields of the state hash (docs/shared-learner.md):
//
//	t   known rate: GCRA theoretical arrival time, the slot after the last booked request (µs)
//	pu  shared pause: no request is booked before it (µs)
//	sc  successes the processes reported (learning)
//	law the learner's rate law (learn.RateLaw, encoded), lv its version: written only by
//	    lawScript, when lv is still the version the writer read
//	r   the pace the law asks for (requests/s), s 1 while it has not been throttled (startup)
//	h   the rate the server's headers declare, after headroom (0: none)
//	e   the pace slots are booked at: min(r, h), or h during the startup when h is set
//	g, vg  the schedule's clock (learning): the slot clock V read vg (µ-slots) at Redis time g
//	    (µs) and runs at e since, V(x) = vg + (x-g)*e; every change of e restarts it at the
//	    value it had, so it never jumps (a cut's hold moves it back one slot)
//	vs  when the state began (µs): a clock of another state is not this one's
//	vt  the slot clock's GCRA arrival time: the slot after the last booked request (µ-slots)
//	cv  when the law last cut (µs): Redis's clock, so it only grows, even across a forgotten state
//
// A learning limiter books slots on the slot clock, not in time: slot n is due when V reaches
// n less the burst. A change of pace changes how fast V runs from then on, so every booked slot
// moves with it, in Redis and in every process, by the same rule: a process that hears of the
// clock (g, vg, e) places each of its waiting slots where Redis does, whatever changes it missed
// in between.
//
// No learning happens in Lua: the law runs in Go (see Limiter.advance), on the state read from
// here, and is written back atomically. The scripts book slots, count successes and restart the
// slot clock when the pace changes.

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
-- clock reads the slot clock of a state (its e, g, vg, vs: HMGET values) and restarts it at now
-- when its pace changes to rate, or starts one when the state has none: it returns g, vg and vs.
-- A slot is 1e6 µ-slots.
local function clock(key, e, g, vg, vs, rate)
  local old = tonumber(e)
  g, vg, vs = tonumber(g) or now, tonumber(vg), tonumber(vs)
  if old == nil or vg == nil or vs == nil then
    -- a new state, or one without a slot clock (written by an older release): start one
    vs = now
    redis.call('HSET', key, 'e', rate, 'g', int(now), 'vg', int(0), 'vs', int(vs))
    return now, 0, vs
  end
  if old ~= rate then
    vg = math.floor(vg + (now - g) * old)
    g = now
    redis.call('HSET', key, 'e', rate, 'g', int(g), 'vg', int(vg))
  end
  return g, vg, vs
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
// It returns {delay µs, the booked slot (known rate: t, µs; learning: vt, µ-slots), interval µs,
// pace in µ-requests/s, live processes (0 when not counted), successes reported sc, law version
// lv, now µs, µs since the slot clock last restarted (g), the time of the law's last cut cv (µs,
// 0: none), the slot clock at g (vg, µ-slots), when the state began (vs, µs)}.
var reserveScript = redis.NewScript(scriptPrelude + `
local key = KEYS[1]
local burst = tonumber(ARGV[4])
local f = redis.call('HMGET', key, 't', 'pu', 'r', 's', 'h', 'e', 'g', 'sc', 'lv', 'cv', 'vg', 'vs', 'vt')
local pu = tonumber(f[2]) or 0
local floor = tonumber(ARGV[11])
local delay, booked, interval, rate
local g, vg, vs = 0, 0, 0
local sc, lv = 0, tonumber(f[9]) or 0
if ARGV[2] ~= '1' then
  interval = tonumber(ARGV[3])
  rate = 1000000 / interval
  local base = math.max(tonumber(f[1]) or 0, now, pu)
  booked = base + interval
  if floor > 0 and booked - burst * interval < now + floor then booked = now + floor + burst * interval end
  delay = booked - burst * interval - now
  redis.call('HSET', key, 't', int(booked))
  redis.call('PEXPIRE', key, math.floor((math.max(booked, pu) - now) / 1000) + 1)
  g = now
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
  g, vg, vs = clock(key, f[6], f[7], f[11], f[12], rate)
  interval = math.ceil(1000000 / rate)
  -- On the slot clock: V(now), and the first slot that may be due (after a pause, or after the
  -- process's local schedule).
  local first = vg + (now - g) * rate
  if pu > now then first = vg + (pu - g) * rate end
  if floor > 0 then first = math.max(first, vg + (now + floor - g) * rate) end
  booked = math.max(tonumber(f[13]) or 0, math.ceil(first)) + 1000000
  local due = g + (booked - burst * 1000000 - vg) / rate
  delay = math.ceil(due - now)
  redis.call('HSET', key, 'vt', int(booked))
  redis.call('PEXPIRE', key, ARGV[8])
end
if delay < 0 then delay = 0 end
local live = 0
if ARGV[9] ~= '' then
  local win = tonumber(ARGV[10])
  redis.call('ZADD', KEYS[2], int(now), ARGV[9])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. int(now - win))
  redis.call('PEXPIRE', KEYS[2], math.floor(win / 1000) + 1)
  live = redis.call('ZCARD', KEYS[2])
end
return {delay, booked, interval, math.floor(rate * 1000000 + 0.5), live, sc, lv, now, now - g, tonumber(f[10]) or 0, vg, vs}
`)

// cancelScript gives a booked slot back when no later request was booked after it (the state's
// arrival time is still the slot's): it moves back by one slot. Otherwise the slot is lost, which
// errs on the slow side. It needs no time.
//
//	KEYS[1] state hash; ARGV[1] the booked slot; ARGV[2] one slot (known rate: the interval, µs;
//	learning: 1e6 µ-slots); ARGV[3] the field ('t' known rate, 'vt' learning)
//
// It returns 1 when the slot was given back, 0 when not.
var cancelScript = redis.NewScript(`
local t = tonumber(redis.call('HGET', KEYS[1], ARGV[3]))
if t ~= nil and t == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], ARGV[3], string.format('%d', t - tonumber(ARGV[2])))
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

// resumeScript ends a shared pause (Limiter.Resume): no request booked from now on waits for it.
// Slots already booked after it keep their times, so the requests holding them do not collide with
// the next ones.
//
//	KEYS[1] state hash
//	ARGV[1] now (µs) or 0 for Redis TIME
//
// It returns 1 when a pause was running, 0 when not.
var resumeScript = redis.NewScript(scriptPrelude + `
local pu = tonumber(redis.call('HGET', KEYS[1], 'pu')) or 0
if pu <= now then return 0 end
redis.call('HDEL', KEYS[1], 'pu')
return 1
`)

// lawScript writes the rate law back, if no other process wrote it since it was read: a
// compare-and-set on the version lv. A new pace restarts the slot clock at the value it has, so the
// slots booked beyond now move to the new pace; after a cut the clock also goes back one slot, so
// that every slot not yet due, and the first one booked next, is one new spacing later (the law's
// hold: the throttle emptied the server's quota, and a request sent at once would only draw
// another), and the cut's time is kept as cv (see Limiter.heard).
//
//	KEYS[1] state hash
//	ARGV[1] now (µs) or 0 for Redis TIME
//	ARGV[2] the version the law was read at
//	ARGV[3] the encoded law
//	ARGV[4] the pace it asks for (requests/s)
//	ARGV[5] 1 while it has not been throttled (startup), else 0
//	ARGV[6] 1 when it cut the pace
//	ARGV[7] lifetime of learned state (ms)
//	ARGV[8] when the state is new (no law in Redis): the law's count of successes, added to sc so
//	        that the two agree and the successes counted in the new state are applied (a process
//	        seeding a forgotten state with the law it last shared, see Limiter.readLaw; 0 otherwise)
//
// It returns {1, the new version, pace in µ-requests/s, µs since the slot clock last restarted,
// now µs, the slot clock at its restart (µ-slots), when the state began (µs)} when written, {0,
// the current version} when another process wrote first.
var lawScript = redis.NewScript(scriptPrelude + `
local key = KEYS[1]
local f = redis.call('HMGET', key, 'lv', 'h', 'e', 'g', 'vg', 'vs', 'vt')
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
local rate = pace(r, s, tonumber(f[2]) or 0)
local g, vg, vs = clock(key, f[3], f[4], f[5], f[6], rate)
if ARGV[6] == '1' then
  -- the hold: the clock restarts one slot back, and no slot is booked before now's
  local vnow = math.floor(vg + (now - g) * rate)
  g, vg = now, vnow - 1000000
  redis.call('HSET', key, 'g', int(g), 'vg', int(vg), 'vt', int(math.max(tonumber(f[7]) or 0, vnow)), 'cv', int(now))
end
redis.call('HSET', key, 'law', ARGV[3], 'lv', int(nv), 'r', r, 's', s)
redis.call('PEXPIRE', key, ARGV[7])
return {1, nv, math.floor(rate * 1000000 + 0.5), now - g, now, vg, vs}
`)
