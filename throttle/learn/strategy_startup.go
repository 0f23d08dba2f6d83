package learn

// startupStrategy drives before the server has said anything: no header, no throttle. It does not
// pace; it caps the requests in flight at one more than the successes seen, so the cap doubles
// every round trip (TCP's slow start), from one request before the first answer. A burst of
// workers thus reaches the server one round trip at a time instead of in one stampede, and a server
// that never throttles and says nothing is not slowed after a few round trips. Its one state,
// slow-start, caps the requests in flight until the cap has grown past startupOpen, every worker
// count it would matter for; then there is no cap.
type startupStrategy struct{}

// startupOpen is the cap past which the startup stops counting: a client with more requests in
// flight than this is not held back by slow start any more (one sendLog's worth).
const startupOpen = sendLogSize

func (startupStrategy) name() string { return "startup" }

func (startupStrategy) state() string { return "slow-start" }

func (startupStrategy) observe(int64, *Signal, *model) string { return "" }

func (startupStrategy) drives(t int64, m *model) bool {
	return m.trust == trustNone && m.throttles == 0
}

func (startupStrategy) plan(t int64, m *model) plan {
	if m.successes+1 >= startupOpen {
		return plan{}
	}
	return plan{maxInFlight: int(m.successes) + 1}
}

// steady: once open, the plan is no cap and no pace, whatever the successes.
func (startupStrategy) steady(m *model) bool { return m.successes+1 >= startupOpen }
