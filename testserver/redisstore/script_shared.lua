-- steady redisstore: the definitions every decision script shares. scripts.go makes of the pieces
-- two scripts (EVALSHA) and a library of two functions (FCALL) with the same arguments and reply:
-- script_many.lua decides any number of checks, script_one.lua one. The drivers decide every check
-- of one request, all-or-nothing, atomically, and differ only in how many checks they loop over:
-- the arguments, the algorithms, the state's encoding and the reply are here and in the blocks
-- they include, once. This file and script_algorithms.lua are the chunk's (a library's: made once
-- when it is loaded, where no global but redis can be read); script_call.lua, script_kinds.lua
-- and script_locals.lua start each run (each call of a function, which has no kinds block: all its
-- algorithms are made at load).
-- Mirrors package algorithm's integer-nanosecond arithmetic in integer microseconds; every number
-- stays below 2^53 within the bounds the Go side enforces (bounds.go), so doubles are exact.
--
-- ARGV[1]: decision time in µs since the epoch, or "" to read Redis TIME.
-- ARGV[2]: the least time to live of a written state, µs (with the caller's clock).
-- ARGV[3]: number of checks. Then 9 values per check:
--   kind, n, flag (0: enforce, 1: advisory, 2: charge), limit, burst, window µs,
--   maxdelay µs (-1: none), publish limit (0: no publish algorithm), publish burst;
--   for a request of one check, the last three may be left out when they are -1, 0, 0, and the
--   publish ones when they are 0, 0 (fewer arguments cost Redis less for the usual check).
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
-- there (Lua 5.1): as a script, every local function is a new closure on every run, and every
-- local of this chunk it uses a new upvalue, so only the algorithms a request uses are made, they
-- capture few locals, and the tables made per run are few (a state per key, an entry per
-- committing check of several, the reply).

local NEVER = -1
local OVERDUE = -2
-- The algorithm kinds as the arguments spell them: compared as strings, never converted.
local TOKEN, LEAKY, FIXED, LOG, SLIDING = '1', '2', '3', '4', '5'

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

-- Set by script_call.lua: the formats of integers, and the decision time in µs.
local INT1, INT3
local t
-- Which algorithms are made (script_kinds.lua, or all of them in a library).
local buckets, fixed, sliding, logs
-- A library's numbers of limits, bursts and windows by the strings the arguments spell them with
-- (a rule sends the same ones on every decision), kept between calls so that each is converted
-- once rather than on every decision (see script_args.lua); nnums counts them, and past NUMS_MAX
-- (a few dozen kB) the table starts again. A script's run has none (nil): it converts them.
local nums, nnums
local NUMS_MAX = 1024
-- A library's state and reply tables for the one-check function, used again by every call rather
-- than made (Redis runs one call at a time and has read the reply before the next): a table made
-- costs about 0.1-0.2 µs. A script's run has none (nil) and makes them.
local one_st, one_out

