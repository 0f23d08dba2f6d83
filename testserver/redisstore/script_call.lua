-- Starts a run (after script_shared.lua): the integer formats, once per library and on every run
-- of a script; the decision time t; the number of checks.
if not INT1 then
  -- How integers are written: with %d, less than half the cost of %.0f in Redis's Lua, where %d
  -- formats a C long that holds every integer the bounds allow (64 bits, as on every 64-bit Unix);
  -- with %.0f, exact everywhere, where it does not (a 32-bit build, or Windows, whose long has 32).
  -- Not at the top of the chunk: a library being loaded cannot read string.
  INT1, INT3 = '%.0f', '%.0f %.0f %.0f'
  if string.format('%d', 2^53) == '9007199254740992' then INT1, INT3 = '%d', '%d %d %d' end
end
if ARGV[1] == '' then
  local tm = redis.call('TIME')
  t = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
else
  t = tonumber(ARGV[1])
end
-- One check, the usual request, is recognised without a tonumber (see script_args.lua).
local nchecks = 1
if ARGV[3] ~= '1' then nchecks = tonumber(ARGV[3]) end
