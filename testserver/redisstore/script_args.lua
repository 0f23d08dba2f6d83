-- Block (included by a driver): the arguments of the check whose values follow ARGV[o], as locals
-- kind and flag (strings), n, maxd, L, B, W, pL and pB (publish limit and burst; 0 without one).
-- A tonumber costs about 0.1 µs in Redis's Lua (strtod), as much as the rest of this block: the
-- values a usual check sends (one request, no max delay, no publish algorithm) are recognised as
-- the strings the client writes for them (go-redis writes an integer in decimal, so 1 is always
-- "1") before anything is converted.
local kind, n, flag = argv[o + 1], argv[o + 2], argv[o + 3]
if n == '1' then n = 1 else n = tonumber(n) end
local maxd, L, B, W = argv[o + 4], tonumber(argv[o + 5]), tonumber(argv[o + 6]), tonumber(argv[o + 7])
if maxd == '-1' then maxd = -1 else maxd = tonumber(maxd) end
local pL, pB = argv[o + 8], 0
if pL == '0' then pL = 0 else pL = tonumber(pL) end
if pL > 0 then pB = tonumber(argv[o + 9]) end
