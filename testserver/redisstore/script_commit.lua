-- Block (included by a driver): adds n of the check (kind, L, W, pL) to st (zk: its sorted set, for
-- the sliding log), and keeps in st.ttl the longest time, in µs, its commits need the state kept.
do
  local ttl
  if kind == TOKEN or kind == LEAKY then
    local lidle = L
    if pL > 0 and pL < lidle then lidle = pL end
    ttl = bucket_commit(st, n, L, W, lidle)
  elseif kind == FIXED then
    ttl = fw_commit(st, n, W)
  elseif kind == LOG then
    ttl = log_commit(zk, st, n, L, W)
    st.zk = zk
  else
    ttl = sw_commit(st, n, W)
  end
  st.ttl = max(st.ttl, ttl)
end
