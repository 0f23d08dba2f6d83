-- steady redisstore: the driver for any number of checks (after script_locals.lua). Decides every
-- check, loading each state once (two checks may share one), commits them all if every enforced
-- check allowed (charges always), and writes each committed state once.
local keys = KEYS
local states = {}
local commits = {} -- per check that commits if all do: {reply offset, kind, n, L, W, publish L, state, zset key}
local out = {0, 0, 0, 0, 0, 0} -- room for one check's reply without publish
local scratch -- none: every state has its own table
local p = 0 -- reply entries so far
local ok = true
local ki = 1
for i = 1, nchecks do
  local o = 3 + (i - 1) * 9
  --#include script_args.lua
  local hk = keys[ki]
  ki = ki + 1
  local zk
  if kind == LOG then
    zk = keys[ki]
    ki = ki + 1
  end
  local st = states[hk]
  if not st then
    --#include script_read.lua
    states[hk] = st
  end
  local at, al = p + 6, 0
  --#include script_decide.lua
  if al == 1 or flag == '2' then
    commits[#commits + 1] = {at, kind, n, L, W, pL, st, zk}
  elseif flag == '0' then
    ok = false
  end
end

if ok then
  for _, c in ipairs(commits) do
    local kind, n, L, W, pL, st, zk = c[2], c[3], c[4], c[5], c[6], c[7], c[8]
    --#include script_commit.lua
    out[c[1]] = 1
  end
  for hk, st in pairs(states) do
    --#include script_write.lua
  end
end
return out
