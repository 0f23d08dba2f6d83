-- Block (included by a driver): writes st at key hk when something committed to it, and lets it
-- (and its sorted set) expire when it is back at its initial state.
if st.ttl >= 0 then
  local ms = format(INT1, max(cdiv(max(st.ttl, minttl), 1000), 1))
  call('SET', hk, format(INT3, st.a, st.b, st.c), 'PX', ms)
  if st.zk then call('PEXPIRE', st.zk, ms) end
end
