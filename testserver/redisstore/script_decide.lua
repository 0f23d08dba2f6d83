-- Block (included by a driver, after script_args.lua): decides the check on st (zk: its sorted
-- set, for the sliding log), writes its reply at out[p+1..] (committed 0) and its publish
-- algorithm's after it when it has one, advances p past them, and sets al, declared by the
-- driver, to 1 when the check allows and 0 when not.
do
  local rem, reset, retry, delay, pal, prem, preset, pretry, pdelay
  if kind == TOKEN or kind == LEAKY then
    local leaky = kind == LEAKY
    al, rem, reset, retry, delay = bucket_decide(st, n, L, B, W, leaky)
    if pL > 0 then pal, prem, preset, pretry, pdelay = bucket_decide(st, n, pL, pB, W, leaky) end
  elseif kind == FIXED then
    al, rem, reset, retry, delay = fw_decide(st, n, L, W)
    if pL > 0 then pal, prem, preset, pretry, pdelay = fw_decide(st, n, pL, W) end
  elseif kind == LOG then
    local view = log_view(zk, st, W)
    al, rem, reset, retry, delay = log_decide(zk, view, n, L, W)
    if pL > 0 then pal, prem, preset, pretry, pdelay = log_decide(zk, view, n, pL, W) end
  elseif kind == SLIDING then
    al, rem, reset, retry, delay = sw_decide(st, n, L, W)
    if pL > 0 then pal, prem, preset, pretry, pdelay = sw_decide(st, n, pL, W) end
  else
    error('redisstore: unknown algorithm kind ' .. tostring(kind))
  end
  if al == 1 and maxd >= 0 and delay > maxd then
    al, rem, retry = 0, 0, OVERDUE
  end
  out[p + 1], out[p + 2], out[p + 3], out[p + 4], out[p + 5], out[p + 6] = al, rem, reset, retry, delay, 0
  p = p + 6
  if pL > 0 then
    out[p + 1], out[p + 2], out[p + 3], out[p + 4], out[p + 5] = pal, prem, preset, pretry, pdelay
    p = p + 5
  end
end
