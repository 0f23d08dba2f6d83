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
	lastReset  int64 // the reset the newest answer said
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
	if debugDeclared != nil {
		debugDeclared(fmt.Sprintf("answer sent=%v at=%v thr=%v R=%d c@send=%d known=%v credit=%d unseen=%d inflight=%d",
			durationOf(s.Sent), durationOf(s.Answered), s.Throttled, s.Remaining, c, known, d.current(m), m.sends.unseen(s.Sent), m.inFlight))
	}
	if s.Throttled {
		// A credit of one is a race lost to the jitter or to another client as often as a lie:
		// only a request the headers left room beyond counts against them.
		if (known && c > 1) || (s.HasRemaining && s.Remaining > 0) {
			m.contradictions++
			if m.contradictions >= m.tun.DistrustAfter {
				m.trust = trustDistrusted
				return join(ev, fmt.Sprintf("declared %d/%v -> distrusted (%d throttles with quota said to remain)",
					m.limit, durationOf(m.window), m.contradictions))
			}
		} else if known && c <= 0 {
			// The experiment on an exhausted quota: a throttle says it comes back whole, or, for
			// a refilling one paced at the declared rate, that it sustains only limit-1 per window.
			switch {
			case m.kind == KindUnknown && d.lastReset <= m.window:
				m.kind = KindWhole
				ev = join(ev, "kind -> whole (throttled at the declared pace after the quota ran out)")
			case m.kind == KindUnknown:
				// A quota that comes back whole does so within its window; one whose reset lies
				// beyond it weighs a past window (a sliding window counter).
				m.kind = KindCounter
				ev = join(ev, fmt.Sprintf("kind -> counter (throttled at the declared pace, the reset %v beyond the window)", durationOf(d.lastReset)))
			case m.kind == KindRefilling:
				m.kind = KindCounter
				ev = join(ev, "kind -> counter (throttled at the declared pace while refilling)")
			}
		}
	} else if known && c <= 0 {
		switch {
		case m.kind == KindUnknown:
			m.kind = KindRefilling
			ev = join(ev, "kind -> refilling (admitted at the declared pace after the quota ran out)")
		case m.kind == KindWhole && s.HasRemaining && s.Remaining < m.limit/2:
			// Admitted after the hold, but little came back: the quota returns a little at a
			// time (a sliding log spent unevenly, a sliding window counter).
			m.kind = KindRefilling
			ev = join(ev, fmt.Sprintf("kind -> refilling (%d of %d back after the reset)", s.Remaining+1, m.limit))
		}
	}

	if s.HasReset && s.Sent >= d.newestSent {
		d.lastReset = s.Reset
	}
	if s.HasReset && m.window > 0 && s.Reset > m.window && (m.kind == KindUnknown || m.kind == KindRefilling) {
		// A quota restored only after more than its window weighs a past window on the present
		// one: a sliding window counter, whatever it has admitted so far.
		m.kind = KindCounter
		ev = join(ev, fmt.Sprintf("kind -> counter (reset %v beyond the %v window)", durationOf(s.Reset), durationOf(m.window)))
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
// the answer s that said it was spent: the answer's server time (one way before it arrived) plus
// Reset, less the one way the request takes to get there, late by the jitter margin so that it
// arrives after the reset despite the jitter of its trip. 0 when no reset was said.
func (d *declaredStrategy) wholeReturns(s *Signal, m *model) int64 {
	if !s.HasReset {
		return 0
	}
	return s.Answered + s.Reset - 2*m.rtt.oneWay() + m.rtt.margin(m.tun.JitterMargin)
}

func (d *declaredStrategy) drives(t int64, m *model) bool { return m.trust == trustBelieved }

func (d *declaredStrategy) plan(t int64, m *model) plan {
	p := plan{interval: m.declaredInterval(), setCredit: true}
	if m.kind != KindCounter && m.limit > 0 && m.limit <= maxWindowLimit && m.window > 0 {
		// Any window of this client's paced sends stays within the declared limit: against a
		// sliding log spent unevenly, a place frees up exactly one window after the send it holds
		// (the slack covers the jitter of both trips); against a bucket the pace already keeps it.
		// A sliding window counter weighs the previous window's sends instead, and a request one
		// window after a burst is still refused there: its pace of limit-1 per window is what it
		// sustains.
		p.windowLimit, p.window, p.windowSlack = int(m.limit), m.window, m.rtt.margin(m.tun.JitterMargin)
	}
	c := d.current(m)
	if m.kind == KindCounter {
		// A counter's remaining count is what fits now; spent at once it crowds this window,
		// and the next one, weighed by it, refuses the pace for a while. An even pace of limit-1
		// per window fits every instant.
		c = 0
	}
	if m.kind == KindRefilling || m.kind == KindUnknown {
		c -= d.reserve(m)
	}
	p.credit = max(c, 0)
	if c <= 0 && d.holdUntil > t {
		p.hold = d.holdUntil
	}
	return p
}

// reserve is what a refilling quota keeps back from the credit: the requests the declared rate
// admits within the jitter margin, and at least one. Paced sends leave their slots late by the
// sender's scheduling and arrive late by the network's jitter, so two can reach the server closer
// than the spacing; a bucket kept that many requests from empty absorbs them, one spent to the last
// request throttles the first pair that bunches (and a throttle costs its Retry-After, a second at
// least where it is written in whole seconds). Headroom refills the reserve; spending it at once
// would undo what the headroom is for. A whole quota keeps none: it comes back at its reset.
func (d *declaredStrategy) reserve(m *model) int64 {
	iv := m.declaredInterval()
	if iv <= 0 {
		return 1
	}
	return 1 + m.rtt.margin(m.tun.JitterMargin)/iv
}

// maxWindowLimit bounds the client-side window's memory (one slot per request in it): a declared
// limit above it is kept by the pace and the holds alone.
const maxWindowLimit = sendLogSize

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

var debugDeclared func(string)
