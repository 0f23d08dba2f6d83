package learn

import (
	"fmt"
	"time"
)

// declaredStrategy drives while the server's headers are believed. It spends what the server
// says remains at once (less the requests it has not seen yet), paces at the declared rate when
// that is spent, and, once the evidence shows the quota comes back whole, holds until the reset
// instead. States:
//
//	spending  the last answer left credit: requests go at once
//	pacing    credit spent, quota refilling or kind unknown: the declared pace (against an
//	          unknown kind, the first request at the pace is the experiment that tells it)
//	holding   credit spent, quota comes back whole: nothing until the reset
type declaredStrategy struct {
	credit     int64 // what the newest answer left, less the sends counted since (at sendsAt)
	sendsAt    int64 // m.sends.n when credit was set
	creditTime int64 // answer time of the response that set it
	newestSent int64 // send time of the request whose answer set it
	hasCredit  bool
	holdUntil  int64
	windowSeen int64 // the longest reset seen, for a limit declared without a window
}

func (d *declaredStrategy) name() string { return "declared" }

func (d *declaredStrategy) state() string {
	switch {
	case d.current(nil) > 0:
		return "spending"
	case d.holdUntil > 0:
		return "holding"
	default:
		return "pacing"
	}
}

// current is the credit left now: what the newest answer said, less what was sent since.
func (d *declaredStrategy) current(m *model) int64 {
	if !d.hasCredit {
		return 0
	}
	if m == nil {
		return d.credit
	}
	return d.credit - (m.sends.n - d.sendsAt)
}

// creditAtSend is the credit the request sent at sent had when it left (recorded with the send):
// positive when the headers said there was quota for it.
func (d *declaredStrategy) creditAtSend(sent int64, m *model) (int64, bool) {
	if !d.hasCredit {
		return 0, false
	}
	return m.sends.creditOf(sent)
}

func (d *declaredStrategy) observe(t int64, s *Signal, m *model) string {
	if s.Failed {
		return ""
	}
	if !s.headers() {
		return ""
	}
	var ev string
	if m.trust == trustNone {
		m.trust = trustBelieved
		ev = "headers seen: believed"
	}
	if s.Limit > 0 {
		w := s.Window
		if w <= 0 && s.HasReset {
			// A limit without a window (X-RateLimit-Limit alone, as GitHub sends it) is per the
			// longest reset seen, rounded up to whole seconds, the unit such resets come in.
			d.windowSeen = max(d.windowSeen, ceilSecond(s.Reset))
			w = d.windowSeen
		}
		if w > 0 && (s.Limit != m.limit || w != m.window) {
			m.limit, m.window = s.Limit, w
			ev = join(ev, fmt.Sprintf("declared %d/%v", s.Limit, durationOf(w)))
		}
	}
	if m.trust == trustDistrusted {
		return ev
	}

	// Evidence against the headers: a throttle for a request the headers had quota for, or a
	// throttle that itself says quota remains.
	c, known := d.creditAtSend(s.Sent, m)
	if s.Throttled {
		if (known && c > 0) || (s.HasRemaining && s.Remaining > 0) {
			m.contradictions++
			if m.contradictions >= m.tun.DistrustAfter {
				m.trust = trustDistrusted
				return join(ev, fmt.Sprintf("declared %d/%v -> distrusted (%d throttles with quota said to remain)",
					m.limit, durationOf(m.window), m.contradictions))
			}
		} else if known && c <= 0 {
			// The experiment on an exhausted quota: a throttle says it comes back whole, or, for
			// a refilling one paced at the declared rate, that it sustains only limit-1 per window.
			switch m.kind {
			case KindUnknown:
				m.kind = KindWhole
				ev = join(ev, "kind -> whole (throttled at the declared pace after the quota ran out)")
			case KindRefilling:
				if m.limit > 1 {
					m.kind = KindCounter
					ev = join(ev, "kind -> counter (throttled at the declared pace while refilling)")
				}
			}
		}
	} else if known && c <= 0 && m.kind == KindUnknown {
		m.kind = KindRefilling
		ev = join(ev, "kind -> refilling (admitted at the declared pace after the quota ran out)")
	}

	if s.HasRemaining {
		// The answer to the newest request sets the credit; an answer to an older one, or to
		// one that left in the same instant (overtaken on the way), can only lower it.
		// Requests that left up to a jitter margin before this one may have arrived after it,
		// unseen too: counting them keeps a reordering on the way from drawing a throttle.
		c := s.Remaining - m.sends.unseen(s.Sent-m.rtt.margin(m.tun.JitterMargin))
		if s.Sent <= d.newestSent && d.hasCredit {
			c = min(c, d.current(m))
		}
		d.newestSent = max(d.newestSent, s.Sent)
		d.credit = c
		d.sendsAt, d.creditTime, d.hasCredit = m.sends.n, s.Answered, true
		d.holdUntil = 0
		if d.credit <= 0 && m.kind == KindWhole {
			d.holdUntil = d.wholeReturns(s, m)
		}
	}
	return ev
}

// wholeReturns is when a request may leave to find a quota that comes back whole, judged from
// the answer s that said it was spent: the earlier of two instants that are each safe.
//   - The reset: the answer's server time (one way before it arrived) plus Reset. A request sent
//     one way before that arrives after it.
//   - One window after the send limit places back (when the ring still holds it): no window
//     then holds more than limit of this client's requests, so a sliding log has a place free,
//     and a fixed window's reset, which a whole quota's sends precede, has passed.
//
// Both are late by the jitter margin, so that the request arrives after the instant despite the
// jitter of its trip.
func (d *declaredStrategy) wholeReturns(s *Signal, m *model) int64 {
	at := int64(0)
	if s.HasReset {
		at = s.Answered + s.Reset - 2*m.rtt.oneWay()
	}
	if m.limit > 0 && m.window > 0 {
		if slot, ok := m.sends.slotOf(m.limit); ok && (at == 0 || slot+m.window < at) {
			at = slot + m.window
		}
	}
	if at == 0 {
		return 0
	}
	return at + m.rtt.margin(m.tun.JitterMargin)
}

func (d *declaredStrategy) drives(t int64, m *model) bool { return m.trust == trustBelieved }

func (d *declaredStrategy) plan(t int64, m *model) plan {
	p := plan{interval: m.declaredInterval(), setCredit: true}
	c := d.current(m)
	p.credit = max(c, 0)
	if c > 0 {
		return p
	}
	h := d.holdUntil
	if h == 0 {
		h = d.slidingHold(m)
	}
	if h > t {
		p.hold = h
	}
	return p
}

// slidingHold keeps any window of this client's sends within the declared limit once the credit
// is spent: the next request waits until one window after the send limit places back, late by the
// jitter margin (0 when the ring no longer holds it). Against a sliding log whose quota was spent
// unevenly this is exactly when a place frees up; against any other kind a pace at the declared
// rate already keeps it.
func (d *declaredStrategy) slidingHold(m *model) int64 {
	if m.limit <= 0 || m.window <= 0 {
		return 0
	}
	slot, ok := m.sends.slotOf(m.limit)
	if !ok {
		return 0
	}
	return slot + m.window + m.rtt.margin(m.tun.JitterMargin)
}

func ceilSecond(d int64) int64 {
	s := int64(time.Second)
	return (d + s - 1) / s * s
}

func durationOf(ns int64) time.Duration { return time.Duration(ns) }

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
