-- The run's locals (after script_algorithms.lua): no closure above captures them. The drivers
-- include the blocks (script_args.lua, script_read.lua, script_decide.lua, script_commit.lua,
-- script_write.lua) as text rather than calling them as local functions: those would be five
-- more closures per run, capturing a dozen upvalues between them, about 1.2 µs of the 9 a
-- one-check EVALSHA costs Redis (measured with the blocks as functions).
local tonumber, max, format, call, argv = tonumber, math.max, string.format, redis.call, ARGV
-- The least time to live: 0 unless the caller sends the time (recognised without a tonumber).
local minttl = 0
if argv[2] ~= '0' then minttl = tonumber(argv[2]) end
