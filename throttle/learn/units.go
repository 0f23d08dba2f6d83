package learn

import "fmt"

// unitsQuota is what the learner believes of the server's quota of other units than requests
// (tokens, points), the quota a request's cost counts against (request.WithCost; 1 without it).
// It meters whatever strategy is in charge, as a second lane beside the requests one:
//
//   - its pace: the pacer's units lane spaces requests by their cost times the window over the
//     limit, less the headroom (the declared rate per unit, as declaredInterval is per request);
//   - its credit: the requests credit's burst may cost at most what the newest answer said
//     remains, less the units sent since that the server had not seen, less the reserve of a
//     refilling quota (declaredStrategy.reserve, per unit).
//
// A spent quota that comes back whole holds the key until its reset (readSignal turns it into a
// Retry-After). The quota is believed as the requests headers are: not once they are distrusted.
type unitsQuota struct {
	limit, window int64
	continuous    bool
	credit        int64 // what the newest answer left, less the units counted unseen (at unitsAt)
	unitsAt       int64 // m.sends.units when credit was set
	newestSent    int64 // send time of the request whose answer set it
	hasCredit     bool
}

// observe learns from one signal; it returns a description of a change of the declared quota.
func (u *unitsQuota) observe(s *Signal, m *model) string {
	if s.Failed {
		return ""
	}
	var ev string
	if s.UnitLimit > 0 && s.UnitWindow > 0 && (s.UnitLimit != u.limit || s.UnitWindow != u.window) {
		u.limit, u.window = s.UnitLimit, s.UnitWindow
		ev = fmt.Sprintf("declared %d units/%v", u.limit, durationOf(u.window))
	}
	if s.UnitLimit > 0 || s.HasUnitRemaining {
		u.continuous = s.UnitContinuous
	}
	if s.HasUnitRemaining {
		// As the requests credit (declaredStrategy.observe): the units of the requests that left
		// up to a jitter margin before this one, and after it, may not have been seen; the
		// answered one is counted among them, on the safe side. An answer to an older request
		// can only lower the credit.
		c := s.UnitRemaining - m.sends.unitsFrom(s.Sent-m.rtt.margin(m.tun.JitterMargin))
		if s.Sent <= u.newestSent && u.hasCredit {
			c = min(c, u.current(m))
		}
		u.newestSent = max(u.newestSent, s.Sent)
		u.credit, u.unitsAt, u.hasCredit = c, m.sends.units, true
	}
	return ev
}

// believed reports whether the units quota meters the pace.
func (u *unitsQuota) believed(m *model) bool { return m.trust != trustDistrusted }

// current is the units credit left now.
func (u *unitsQuota) current(m *model) int64 { return u.credit - (m.sends.units - u.unitsAt) }

// interval is the units lane's spacing per unit, in nanoseconds: the declared rate less the
// headroom; 0 (unpaced) when no units quota is declared or believed.
func (u *unitsQuota) interval(m *model) int64 {
	if u.limit <= 0 || u.window <= 0 || !u.believed(m) {
		return 0
	}
	return int64(float64(u.window) / float64(u.limit) / (1 - m.tun.Headroom))
}

// creditNow is the units the requests going at once may cost: the current credit less a refilling
// quota's reserve, at least 0; -1 (not metered) when no remaining count is known or believed.
func (u *unitsQuota) creditNow(m *model) int64 {
	if !u.hasCredit || !u.believed(m) {
		return -1
	}
	c := u.current(m)
	if iv := u.interval(m); u.continuous && iv > 0 {
		// The units the declared rate admits within the jitter margin, once the margin passes
		// what the headroom absorbs (see declaredStrategy.reserve).
		if margin := m.rtt.margin(m.tun.JitterMargin); float64(margin) > m.tun.Headroom*float64(iv) {
			c -= (margin + iv - 1) / iv
		}
	}
	return max(c, 0)
}
