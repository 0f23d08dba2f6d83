package learn

import (
	"fmt"
	"math"
)

// quotaOfOneProbe finds the window of a quota of one request whose resets say no more than their
// grain: a bucket that holds one request and refills it in under a second says "1 left of 1,
// whole again in 1 s" after every admission, in whole seconds rounded up (throttled/throttled v2's
// GCRA without a burst: X-RateLimit-Limit 1, X-RateLimit-Reset 1). Read as one per second, the
// pace was the server's rate over 20 at 20/s. Nothing the answers say can show more: no request
// is ever left (no credit to spend ahead of the pace, so the admissions never outgrow it, see
// admittedLog), and the reset tells only that the window is at most its grain.
//
// A quota of one admits a request only once it is whole again since the admission before, so an
// admission a gap after the last shows the window at most that gap, as the server saw it: the
// sends' gap plus the one-way trips' spread (reorderMargin). The probe paces at half the window
// shown so far; each admission that shows a window shorter by ProbeGain or more moves it on, so
// a window a log2 of the ratio away is found in as many steps, each a window long (a second in
// all from a second's reading). The first refusal at a probed pace brackets the window between
// the shortest shown and the pace refused; the window returns to the one shown. After S =
// 2/DeclaredBudget admissions since, twice as many after each refusal, the bracket's geometric
// middle is tested, until it is within ProbeGain. Refusals k+1 and on need 2^k S admissions
// between them, so a run of n ≥ S admissions spends at most about 2/S of them on the probe's
// refusals (each with the requests sent at its pace within its round trip), the DeclaredBudget;
// a run shorter than S pays the first refusal alone. Every refusal of a request sent while a
// test ran, up to the answer of the one that ended it, is the probe's, no evidence of the kind,
// of another client or against the headers.
//
// A refusal at the pace the probe found gives it up: the reading returns and the probe starts
// again after twice the last wait. That covers a rate that fell, another client, and a fixed
// window of one, which admits two requests on either side of its end however close (their gap
// bounds nothing there): the probe costs it a refusal or two per doubling wait. Against a server
// that truly keeps one a second the cost is the first refusal, and one per doubling wait after.
// A limit other than one said, a window said, or another client seen forgets what the probe
// found.
//
// Not safe for concurrent use: the learner's lock guards it.
type quotaOfOneProbe struct {
	// shown is the shortest window an admission showed (the reading's, before any probe).
	shown   int64
	refuted int64 // the longest window refused at its pace (0: none yet)
	// tests are the windows tested since the probe last started, each with the answer time it
	// began at, in order: a refusal is of the pace its request was sent at.
	tests       []probeTest
	lastRefusal int64 // the answer time of the last refusal at a probed pace (0: none)
	since, wait int64 // admissions since that refusal, and how many the next probe waits for
	lastSent    int64 // the latest send time of an admitted request
	reading     int64 // the window read without the probe (the resets', or the admissions')
}

// probeTest is one window tested by quotaOfOneProbe, from the answer time from on.
type probeTest struct{ window, from int64 }

// probeFloor is the shortest window a probe tests: a millisecond, the resolution of the windows
// the learner reads anywhere else (admittedBeyond rounds to it).
const probeFloor = int64(1e6)

// testing reports whether a test is under way.
func (p *quotaOfOneProbe) testing() bool {
	return len(p.tests) > 0 && p.tests[len(p.tests)-1].window > 0
}

// admitted takes an admitted answer of a quota whose window read is w (the resets', shortened by
// the admissions where they did), and returns the event when a test starts or moves on (none
// once the bracket is settled). off is set where the probe must not run (another client seen).
func (p *quotaOfOneProbe) admitted(s *Signal, m *model, w int64, off bool) string {
	if s.Throttled {
		return ""
	}
	prev := p.lastSent
	p.lastSent = max(p.lastSent, s.Sent)
	if off || s.Limit != 1 || (s.Window > 0 && !s.WindowAssumed) || !s.HasReset || s.ResetGrain <= 0 ||
		s.Reset > s.ResetGrain || m.rateAssumed || w <= 0 {
		// Not a quota of one whose reset is at most its grain (another limit said, a window
		// said, a reset that tells more, another client seen): what the probe found was of
		// that quota and this client alone, and is forgotten with a test under way.
		*p = quotaOfOneProbe{lastSent: p.lastSent}
		return ""
	}
	p.reading = w
	if p.shown == 0 {
		p.shown = w
	}
	if prev > 0 && s.Sent > prev {
		// Admitted a gap after the admission before it: the quota was whole again within it.
		if bound := s.Sent - prev + reorderMargin(m); float64(bound) <= float64(p.shown)*(1-m.tun.ProbeGain) {
			p.shown = bound
			if p.testing() {
				return p.start(s.Answered, m, fmt.Sprintf("probe: a window of %v shown", durationOf(p.shown)))
			}
		}
	}
	switch {
	case p.testing():
		return ""
	case p.wait > 0:
		if p.since++; p.since < p.wait {
			return "" // a refusal's wait (see refused)
		}
	case len(p.tests) > 0:
		return "" // the halving reached the floor, or a test was given up: no more until a refusal
	}
	if p.settled(m) {
		return ""
	}
	return p.start(s.Answered, m, fmt.Sprintf("probe: a quota of one whose resets say at most %v, shown %v", durationOf(s.ResetGrain), durationOf(p.shown)))
}

// start begins the next test at the answer time at, and returns the event (why, and the window
// tested), or "" when there is nothing left to test.
func (p *quotaOfOneProbe) start(at int64, m *model, why string) string {
	next := p.shown / 2
	if p.refuted > 0 {
		if p.settled(m) {
			p.stop()
			return why
		}
		next = int64(math.Sqrt(float64(p.shown) * float64(p.refuted)))
	}
	if next < probeFloor {
		p.stop()
		return why
	}
	p.tests = append(p.tests, probeTest{next, at})
	return fmt.Sprintf("%s: testing a window of %v", why, durationOf(next))
}

// settled reports whether the bracket is within ProbeGain: nothing is left to test.
func (p *quotaOfOneProbe) settled(m *model) bool {
	return p.refuted > 0 && float64(p.shown) <= float64(p.refuted)*(1+m.tun.ProbeGain)
}

// stop ends the test under way, if any.
func (p *quotaOfOneProbe) stop() {
	if p.testing() {
		p.tests = append(p.tests, probeTest{0, 0})
	}
}

// refused takes a refusal and returns its event and what it was to the probe: its own (a request
// sent while a test ran, up to the answer of the refusal that ended it: the window returns to the
// shortest one shown), or one at the pace the probe found, which gives that up. Either is the
// learner's pace refused, not the server's word: no evidence of the kind or another client.
func (p *quotaOfOneProbe) refused(s *Signal, m *model) (event string, verdict probeVerdict) {
	if len(p.tests) == 0 || s.Sent <= p.tests[0].from {
		return "", probeNotOwn
	}
	if p.testing() {
		// The pace the request was sent at: the test begun last before it left.
		refuted := p.tests[0].window
		for _, t := range p.tests {
			if t.from < s.Sent && t.window > 0 {
				refuted = t.window
			}
		}
		p.refuted = max(p.refuted, refuted)
		p.lastRefusal, p.since = s.Answered, 0
		p.wait = max(2*p.wait, int64(math.Ceil(2/m.tun.DeclaredBudget)))
		p.tests = p.tests[:0]
		p.tests = append(p.tests, probeTest{0, s.Sent}) // refusals of requests sent before it are the probe's too
		return fmt.Sprintf("probe: a window of %v refused: %v stands (the next test after %d admissions)",
			durationOf(refuted), durationOf(p.shown), p.wait), probeOwnRefusal
	}
	if p.lastRefusal != 0 && s.Sent <= p.lastRefusal {
		return "probe: refused at a probed pace, sent before its refusal came back", probeOwnRefusal
	}
	if p.shown > 0 && p.shown < p.reading {
		// Refused at the pace the probe found: the window it showed does not hold (the rate
		// fell, another client spends the quota, or a fixed window admitted two requests on
		// either side of its end, which no gap bounds). The reading returns, and the probe
		// starts again from it after twice the last wait.
		found := p.shown
		*p = quotaOfOneProbe{lastSent: p.lastSent, lastRefusal: s.Answered, wait: max(2*p.wait, int64(math.Ceil(2/m.tun.DeclaredBudget)))}
		return fmt.Sprintf("probe: refused at the window of %v it found: the reading returns (the next probe after %d admissions)", durationOf(found), p.wait), probeFoundRefused
	}
	return "", probeNotOwn
}

// probeVerdict is what a refusal was to quotaOfOneProbe.
type probeVerdict int

const (
	// probeNotOwn: a refusal the probe had no part in.
	probeNotOwn probeVerdict = iota
	// probeOwnRefusal: a test's refusal, or one sent at a probed pace before it came back.
	probeOwnRefusal
	// probeFoundRefused: a refusal at the pace the probe found, which it gave up.
	probeFoundRefused
)

// window is the window the probe holds the quota to: the one under test, or the shortest shown
// (0: none).
func (p *quotaOfOneProbe) window() int64 {
	if p.testing() {
		return p.tests[len(p.tests)-1].window
	}
	return p.shown
}

// reportedWindow is the window a learner reports for the declared quota: m.window, or, while a
// quota-of-one test runs (m.window is the window under test, which may be refused), the shortest
// window the admissions showed.
func (d *declaredStrategy) reportedWindow(m *model) int64 {
	if d.oneProbe.testing() && d.oneProbe.shown > m.window {
		return d.oneProbe.shown
	}
	return m.window
}
