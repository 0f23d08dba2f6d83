-- Block (included by a driver): sets st, declared by the driver, to the state at key hk (0 0 0
-- when there is none), with ttl -1: nothing committed to it yet; in the table scratch, declared
-- by the driver, when it has one (see one_st in script_shared.lua), else in a new one.
do
  local a, b, cc = 0, 0, 0
  local r = call('GET', hk)
  if r then
    local x, y, z = string.match(r, '^(%-?%d+) (%-?%d+) (%-?%d+)$')
    a, b, cc = tonumber(x) or 0, tonumber(y) or 0, tonumber(z) or 0
  end
  if scratch then
    st = scratch
    st.a, st.b, st.c, st.ttl, st.zk = a, b, cc, -1, nil
  else
    st = {a = a, b = b, c = cc, ttl = -1}
  end
end
