-- Block (included by a driver): the arguments of the check whose values follow ARGV[o], as locals
-- kind, n, flag (a string), maxd, L, B, W, pL and pB (publish limit and burst; 0 without one).
local kind, n, flag = tonumber(argv[o + 1]), tonumber(argv[o + 2]), argv[o + 3]
local maxd, L, B, W = tonumber(argv[o + 4]), tonumber(argv[o + 5]), tonumber(argv[o + 6]), tonumber(argv[o + 7])
local pL = tonumber(argv[o + 8])
local pB = 0
if pL > 0 then pB = tonumber(argv[o + 9]) end
