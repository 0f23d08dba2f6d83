-- Block (included by a driver): the arguments of the check whose values follow ARGV[o], as locals
-- kind and flag (strings), n, L, B, W, maxd, pL and pB (publish limit and burst; 0 without one).
-- A tonumber costs about 0.1 µs in Redis's Lua (strtod), as much as the rest of this block: the
-- values a usual check sends (one request, no max delay, no publish algorithm) are recognised as
-- the strings the client writes for them (go-redis writes an integer in decimal, so 1 is always
-- "1"), or left out, before anything is converted; and a library converts a rule's limit, burst
-- and window once (nums, see script_shared.lua).
local kind, n, flag = argv[o + 1], argv[o + 2], argv[o + 3]
if n == '1' then n = 1 else n = tonumber(n) end
local L, B, W
do
  local sL, sB, sW = argv[o + 4], argv[o + 5], argv[o + 6]
  if nums then L, B, W = nums[sL], nums[sB], nums[sW] end
  if not (L and B and W) then
    L, B, W = tonumber(sL), tonumber(sB), tonumber(sW)
    if nums then
      if nnums >= NUMS_MAX then nums, nnums = {}, 0 end
      nums[sL], nums[sB], nums[sW], nnums = L, B, W, nnums + 3
    end
  end
end
local maxd, pL, pB = argv[o + 7], argv[o + 8], 0
if maxd == nil or maxd == '-1' then maxd = -1 else maxd = tonumber(maxd) end
if pL == nil or pL == '0' then pL = 0 else pL = tonumber(pL) end
if pL > 0 then pB = tonumber(argv[o + 9]) end
