package learn

import (
	"fmt"
	"time"
)

// cyclesStrategy learns, without headers, a quota that comes back whole: a fixed window or a
// sliding log answers a client that outruns it with a run of successes (its quota), then a wall
// of throttles until the quota is back. From that shape it guesses "S per P" and sends in cycles:
// the whole quota at once at each cycle's start, then nothing until the next. States:
//
//	watching   no guess: the rate strategy drives; a wall of throttles after a run is noted
//	testing    the first success after a wall: the rest of the last run's size goes, in a fast
//	           slow start; if at least WholeShare of it is admitted, the quota came back whole
//	cycling    S at each cycle's start, held until the next; the period's bounds narrow by
//	           bisection at every start (a start that draws a throttle is too early)
//	refuted    the guess failed (a test or two cycles throttled within their quota): the rate
//	           strategy drives for good
type cyclesStrategy struct {
	st string

	run, lastRun        int64 // successes in the current run, and in the run before the wall
	maxRun              int64 // the longest run before a wall seen yet
	runStart, lastStart int64 // send time of each run's first success
	wallThrottles       int64 // throttles since the run ended
	lastThrottleSent    int64 // send time of the wall's latest throttle
	firstThrottleSent   int64 // send time of the wall's first throttle
	lastSuccessSent     int64 // send time of the run's latest success
	quota               int64 // S
	lo, hi              int64 // bounds on the period P: a start at lo+... was too early, at hi worked
	cycleStart          int64 // send time of this cycle's first success
	sentInCycle         int64 // requests sent since the cycle started (recorded by the learner)
	admittedInTest      int64
	overrun             int64
	attemptSent         int64 // send time of the attempt that opens the next cycle (0: none out)
	width               int64 // the first wall's uncertainty on the period
	quotaSpentAt        int64 // send time of the cycle's quota-th request (0: not yet)
	// precision is how finely a cycle's start can be timed: see nextOffset.
	precision int64
	// opened counts the cycles opened since the last probe below the period's lower bound, and
	// probeAfter how many open before the next one (see nextOffset); probing is set while the
	// attempt out is such a probe.
	opened, probeAfter int64
	probing            bool
	// probeCycle is set while the cycle a probe opened runs: a throttle within its quota restores
	// the bounds it replaced (probedLo, probedHi), as a sliding log gives back a place or two, not
	// its quota, before its period.
	probeCycle         bool
	probedLo, probedHi int64
	// believedRun counts the successes in a row while the headers were believed: the cycles do
	// not drive then, but the server's largest run is evidence of its quota all the same.
	believedRun  int64
	believedFrom int64 // send time of its first success
}

func (c *cyclesStrategy) name() string { return "cycles" }

func (c *cyclesStrategy) state() string {
	if c.st == "" {
		return "watching"
	}
	return c.st
}

func (c *cyclesStrategy) drives(t int64, m *model) bool {
	return m.trust != trustBelieved && (c.st == "testing" || c.st == "cycling")
}

// minWallThrottles is how many throttles in a row, with no success between them, make a wall: one
// can be a bucket briefly empty; two sent at least a spacing apart are a quota that is gone.
const minWallThrottles = 2

// closeBelievedRun ends the run counted while the headers were believed: what it admitted within
// one declared window counts towards the largest run.
func (c *cyclesStrategy) closeBelievedRun() {
	c.maxRun = max(c.maxRun, c.believedRun)
	c.believedRun = 0
}

func (c *cyclesStrategy) observe(t int64, s *Signal, m *model) string {
	if s.Failed || c.st == "refuted" {
		return ""
	}
	if m.trust == trustBelieved && s.headers() {
		// The headers drive; the largest run the server admitted is noted all the same. After
		// headers that lied are distrusted, a run cut short by the pace that followed (6 against
		// a fixed window of 200 a second) is then no quota: cycling it took 25-49x the physical
		// limit.
		// What counts is what the server admitted within one declared window of the run's first
		// send: a long run paced under the declared rate is no quota, and a run that spans two
		// windows counts the first one's.
		if s.Throttled {
			c.closeBelievedRun()
		} else {
			if c.believedRun == 0 {
				c.believedFrom = s.Sent
			}
			if m.window <= 0 || s.Sent-c.believedFrom <= m.window {
				c.believedRun++
			}
		}
		return ""
	}
	c.closeBelievedRun()
	if s.HasRetry {
		// A Retry-After says when the quota is back: the pause drives, and a pause looks like a
		// wall to this strategy; it has nothing to learn that the server did not say.
		return ""
	}
	c.precision = max(m.rtt.margin(m.tun.JitterMargin), int64(m.tun.Headroom*float64(c.hi)))
	switch c.state() {
	case "watching":
		if s.Throttled {
			if s.Sent <= c.lastSuccessSent {
				return "" // sent while the run went on: part of it, not of a wall after it
			}
			if c.run > 0 {
				c.lastRun, c.lastStart, c.run = c.run, c.runStart, 0
				c.maxRun = max(c.maxRun, c.lastRun)
				c.wallThrottles, c.firstThrottleSent = 0, s.Sent
			}
			c.wallThrottles++
			c.lastThrottleSent = max(c.lastThrottleSent, s.Sent)
			return ""
		}
		if c.run == 0 && c.wallThrottles > 0 && s.Sent <= c.firstThrottleSent+m.rtt.margin(m.tun.JitterMargin) {
			// Sent no later than the first throttle after the run (or within the jitter margin
			// after it: it may have overtaken the throttle on the way there), answered after it:
			// the burst's last success. It is of the run, not a new one (counted as one, the run
			// of one after it is no quota, and the wall is missed; left out, the quota is one
			// short and a cycle that opens early on the last place is taken for a period).
			c.lastRun++
			c.maxRun = max(c.maxRun, c.lastRun)
			c.lastSuccessSent = max(c.lastSuccessSent, s.Sent)
			return ""
		}
		if s.Sent < c.lastThrottleSent {
			// Overtaken on the way by a throttle sent after it: the run was over. (One sent in
			// the same instant as the throttle is of the run: the burst that met the end.)
			return ""
		}
		c.lastSuccessSent = max(c.lastSuccessSent, s.Sent)
		if c.run == 0 {
			c.runStart = s.Sent
			// A wall is throttles sent after the run, over at least a round trip, and over at
			// least the time a bucket refilling at the prior (the run per second, as the rate
			// strategy takes it) gives a request back in: the burst that ran into the quota's end
			// is throttled at once (a startup's requests in flight span a round trip or two), a
			// wall goes on being throttled for longer than a refill would leave it shut.
			spread := c.lastThrottleSent - c.firstThrottleSent
			wall := c.wallThrottles >= minWallThrottles && spread >= m.rtt.min &&
				(c.lastRun == 0 || spread >= int64(time.Second)/c.lastRun)
			// A quota that comes back whole comes back the same size: a run much shorter than
			// the longest one before it (a trickle let through while a bucket or a counter
			// refills) is no quota.
			// And a quota whose WholeShare is under two requests cannot be told from a trickle: a
			// bucket gives one back after a wall, and one more may refill during the test (two
			// clients on a 5/s bucket took a run of 2 for a whole quota and cycled it, 2 per 10 s:
			// the client starved, 12.6x).
			whole := m.tun.WholeShare*float64(c.lastRun) >= 2 && float64(c.lastRun) >= m.tun.WholeShare*float64(c.maxRun)
			if wall && whole {
				// The first success after a wall: the quota may have come back whole.
				c.st, c.quota, c.cycleStart, c.admittedInTest = "testing", c.lastRun, s.Sent, 1
				c.sentInCycle = m.sends.unseen(s.Sent) + 1 // this one, and the ones sent after it
				c.hi = s.Sent - c.lastStart
				c.lo = max(c.lastThrottleSent-c.lastStart, 0)
				c.width = c.hi - c.lo
				c.run = 1
				return fmt.Sprintf("wall of %d throttles after a run of %d: testing whether %d come back at once", c.wallThrottles, c.lastRun, c.lastRun)
			}
		}
		c.run++
		c.wallThrottles = 0
	case "testing":
		if s.Sent < c.cycleStart {
			return "" // sent before the test: teaches nothing about it
		}
		if s.Throttled {
			c.st = "refuted"
			// A trickle is what a bucket gives back after a wall, a request or two: less than
			// half of what makes the quota whole. A counter gives back a share of its limit as
			// its previous window's weight decays (22 of 50 at 50/s), which is no trickle.
			m.trickled = float64(c.admittedInTest) < m.tun.WholeShare*float64(c.quota)/2
			return fmt.Sprintf("refuted: throttled after %d of %d came back (the quota refills, it does not come back whole)", c.admittedInTest, c.quota)
		}
		c.admittedInTest++
		if float64(c.admittedInTest) >= m.tun.WholeShare*float64(c.quota) {
			c.st = "cycling"
			c.opened, c.probeAfter = 0, 2
			return fmt.Sprintf("whole: %d per %v (period between %v and %v)", c.quota, durationOf(c.hi), durationOf(c.lo), durationOf(c.hi))
		}
	case "cycling":
		if c.attemptSent == 0 || s.Sent < c.attemptSent {
			if s.Throttled && s.Sent >= c.cycleStart && (c.quotaSpentAt == 0 || s.Sent <= c.quotaSpentAt) && c.probeCycle {
				// The probe's cycle was not admitted whole: a place or two had come back, not the
				// quota. The bounds it replaced stand, and the next probe waits twice as long.
				c.probeCycle, c.lo, c.hi = false, c.probedLo, c.probedHi
				c.opened, c.probeAfter = 0, 2*c.probeAfter
				// An attempt already out was timed from the probe's bounds: its answer opens no
				// cycle (admitted, it would set the upper bound below the lower one); the next
				// attempt goes at the restored bounds.
				c.attemptSent = 0
				return fmt.Sprintf("probe: throttled within the quota, %v into the cycle: period in (%v, %v] stands", durationOf(s.Sent-c.cycleStart), durationOf(c.lo), durationOf(c.hi))
			}
			if s.Throttled && s.Sent >= c.cycleStart && (c.quotaSpentAt == 0 || s.Sent <= c.quotaSpentAt) {
				c.overrun++
				if c.overrun >= 2 {
					c.st = "refuted"
					return "refuted: two cycles throttled within their quota (the quota shrank, a fixed window's phase, or another client takes it)"
				}
				return fmt.Sprintf("throttled within the quota, %v into the cycle", durationOf(s.Sent-c.cycleStart))
			}
			return ""
		}
		// The answer to the attempt that opens a cycle.
		off := c.attemptSent - c.cycleStart
		if c.probing {
			c.probing = false
			if s.Throttled {
				// The lower bound holds: probe again after twice as many cycles, so that a true
				// period costs a throttle per doubling of the cycles run, a logarithmic share.
				c.attemptSent, c.opened, c.probeAfter = 0, 0, 2*c.probeAfter
				return fmt.Sprintf("probe %v after the last start was early: period in (%v, %v] stands", durationOf(off), durationOf(c.lo), durationOf(c.hi))
			}
			// Admitted below the lower bound: the silence that set it was no period of the
			// server's (another client on the key spent the quota, or a bucket was being
			// over-driven), if the cycle it opens is admitted whole. The period is then at most
			// off; bisect it from nothing.
			c.probeCycle, c.probedLo, c.probedHi = true, c.lo, c.hi
			c.lo, c.hi = 0, off
			c.cycleStart, c.attemptSent, c.overrun = c.attemptSent, 0, max(c.overrun-1, 0)
			c.sentInCycle = m.sends.unseen(c.cycleStart) + 1
			c.quotaSpentAt, c.opened = 0, 0
			return fmt.Sprintf("probe: cycle opened %v after the last, below the lower bound: period in (0, %v]", durationOf(off), durationOf(c.hi))
		}
		if s.Throttled {
			// Too early: the quota was not back yet.
			c.lo = max(c.lo, off)
			if c.lo >= c.hi {
				// A start that was admitted earlier than this one is not (a fixed window entered
				// late in its window, then early): the upper bound was the phase's, not the
				// period's. Widen it again by the first wall's uncertainty.
				c.hi = c.lo + c.width
			}
			c.attemptSent = 0
			return fmt.Sprintf("cycle start %v after the last was early: period in (%v, %v]", durationOf(off), durationOf(c.lo), durationOf(c.hi))
		}
		c.hi = min(c.hi, off)
		c.cycleStart, c.attemptSent, c.overrun = c.attemptSent, 0, max(c.overrun-1, 0)
		c.sentInCycle = m.sends.unseen(c.cycleStart) + 1
		c.quotaSpentAt = 0
		c.opened++
		c.probeCycle = false // the probe's cycle ran whole: its bounds stand
		return fmt.Sprintf("cycle opened %v after the last: period in (%v, %v]", durationOf(off), durationOf(c.lo), durationOf(c.hi))
	}
	return ""
}

// sent records one request leaving at slot: once the cycle's quota is spent, the first request
// at or after the hold is the attempt that opens the next cycle.
func (c *cyclesStrategy) sent(slot int64) {
	switch c.st {
	case "testing":
		c.sentInCycle++
		if c.sentInCycle == c.quota {
			c.quotaSpentAt = slot // the test is the first cycle: what follows the quota is extra
		}
	case "cycling":
		c.sentInCycle++
		if c.sentInCycle == c.quota {
			c.quotaSpentAt = slot
		}
		if c.sentInCycle > c.quota && c.attemptSent == 0 && slot >= c.cycleStart+c.nextOffset() {
			c.attemptSent = slot
			c.probing = c.probeDue()
		}
	}
}

// nextOffset is when, after this cycle's start, the next cycle may start: the middle of the
// period's bounds, never below the lower one; the upper bound once they are within the precision
// a start can be timed to (c.precision: the jitter margin, and the Headroom's share of the
// period). Bisecting finer costs a throttle per early start and gains less than the jitter loses.
//
// Every so often (probeDue) the start goes at half the lower bound instead: the lower bound comes
// from the silence after the first run, and a silence is no period when another client on the key
// spent the quota meanwhile (two clients on a 5/s bucket, one worker each, cycled 4 per 42 s:
// 30x), so it is tested like the rate strategy's estimate, after 2, 4, 8... cycles.
func (c *cyclesStrategy) nextOffset() int64 {
	if c.probeDue() {
		return c.lo / 2
	}
	if c.hi-c.lo <= max(c.precision, 1) {
		return c.hi
	}
	return c.lo + (c.hi-c.lo+1)/2
}

// probeDue reports whether the next cycle's start probes below the lower bound: after probeAfter
// cycles opened since the last probe, when the lower bound is above the precision a start is timed
// to.
func (c *cyclesStrategy) probeDue() bool {
	return c.st == "cycling" && c.probeAfter > 0 && c.opened >= c.probeAfter && c.lo/2 > max(c.precision, 1)
}

func (c *cyclesStrategy) plan(t int64, m *model) plan {
	// The quota goes at once (while testing, in a fast slow start); once it is spent, a hold keeps
	// every request for the next cycle, and
	// one request in flight at most lets a single one go at the hold: the attempt whose success
	// opens the cycle (and grants the rest), or whose throttle moves the hold. The cap waits for
	// the attempt's answer as long as a period may last: an answer later than that is lost, and
	// the next request tries again.
	p := plan{setCredit: true}
	if c.sentInCycle < c.quota {
		// The spacing after the credit is the period's upper bound: the quota spent, nothing
		// more goes in this cycle until an answer re-plans (an unpaced plan would let every
		// waiting request follow the credit at once, into the wall).
		p.credit, p.interval = c.quota-c.sentInCycle, c.hi
		if c.st == "testing" {
			// The test goes as a fast slow start: two in flight beside the success that began
			// it, four more per success after. A bucket refutes it with the one or two in
			// flight (it gives back one request, and the next is throttled), not with every
			// worker's request sent into it; a quota that came back whole admits them all,
			// log5 of it round trips later.
			p.maxInFlight = 4*int(c.admittedInTest-1) + 2
		}
		return p
	}
	p.maxInFlight, p.capWait = 1, c.hi
	if c.st == "cycling" {
		p.hold = c.cycleStart + c.nextOffset() + m.rtt.margin(m.tun.JitterMargin)
	}
	return p
}
