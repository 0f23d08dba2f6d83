-- steady redisstore: the driver for one check (after script_locals.lua), the usual request: what
-- script_many.lua does for a list of one, without the lists (no table of states, none of commits).
local o = 3
--#include script_args.lua
local hk, zk = KEYS[1], KEYS[2]
local st, scratch = nil, one_st
--#include script_read.lua
local out, p, al = one_out, 0, 0
if out then
  out[7] = nil -- the reply ends after 6 unless the check has a publish algorithm
else
  out = {0, 0, 0, 0, 0, 0}
end
--#include script_decide.lua
if al == 1 or flag == '2' then
  --#include script_commit.lua
  out[6] = 1
  --#include script_write.lua
end
return out
