-- Which algorithms this run of a script uses (before script_algorithms.lua): only their
-- functions are made.
for o = 4, 3 + 9 * nchecks, 9 do
  local k = ARGV[o]
  if k == TOKEN or k == LEAKY then buckets = true
  elseif k == FIXED then fixed = true
  elseif k == LOG then logs = true
  elseif k == SLIDING then sliding = true end
end
