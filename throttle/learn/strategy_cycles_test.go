package learn

import (
	"testing"
	"time"
)

// TestCyclesProbeBelowTheLowerBound: the cycles' period's lower bound comes from the silence after
// the first run, which is no period when another client on the key spent the quota meanwhile. After
// 2, then 4, 8... cycles, a start goes at half the lower bound: admitted, the period is bisected
// from nothing (two clients, one worker each, on a 5/s bucket cycled 4 per 42 s: 30x); throttled,
// the bounds stand and the next probe waits twice as many cycles.
func TestCyclesProbeBelowTheLowerBound(t *testing.T) {
	for _, admitted := range []bool{true, false} {
		t.Run(map[bool]string{true: "admitted", false: "throttled"}[admitted], func(t *testing.T) {
			l, c := learnerWith[cyclesStrategy](t)
			m := &l.m
			*c = cyclesStrategy{st: "cycling", quota: 4, lo: sec(42.4), hi: sec(42.6), width: sec(20),
				cycleStart: sec(100), sentInCycle: 4, opened: 1, probeAfter: 2}
			// A cycle opens at the period's upper bound: the second since the last probe.
			c.sent(sec(142.6))
			c.observe(sec(142.8), &Signal{Sent: sec(142.6), Answered: sec(142.8)}, m)
			if c.cycleStart != sec(142.6) || c.opened != 2 {
				t.Fatalf("cycle not opened at 142.6 s: start %v, opened %d", time.Duration(c.cycleStart), c.opened)
			}
			if got, want := c.nextOffset(), c.lo/2; got != want {
				t.Fatalf("next offset %v, want the probe at half the lower bound, %v", time.Duration(got), time.Duration(want))
			}
			for range 4 {
				c.sent(sec(142.6))
			}
			probe := sec(142.6) + c.lo/2
			c.sent(probe)
			if c.attemptSent != probe || !c.probing {
				t.Fatalf("attempt %v probing %v, want the probe sent at %v", time.Duration(c.attemptSent), c.probing, time.Duration(probe))
			}
			c.observe(probe+sec(0.2), &Signal{Sent: probe, Answered: probe + sec(0.2), Throttled: !admitted}, m)
			switch {
			case admitted && (c.lo != 0 || c.hi != sec(21.2)):
				t.Fatalf("admitted probe: period in (%v, %v], want (0, 21.2s]", time.Duration(c.lo), time.Duration(c.hi))
			case !admitted && (c.lo != sec(42.4) || c.hi != sec(42.6) || c.probeAfter != 4 || c.st != "cycling"):
				t.Fatalf("throttled probe: %s, period in (%v, %v], next probe after %d; want cycling in (42.4s, 42.6s], after 4",
					c.st, time.Duration(c.lo), time.Duration(c.hi), c.probeAfter)
			}
			if !admitted {
				return
			}
			// The probe's cycle is throttled within its quota (a sliding log gave back a place,
			// not its quota): the bounds the probe replaced stand, and no overrun is counted.
			c.sent(probe)
			c.observe(probe+sec(0.3), &Signal{Sent: probe, Answered: probe + sec(0.3), Throttled: true}, m)
			if c.lo != sec(42.4) || c.hi != sec(42.6) || c.probeAfter != 4 || c.overrun != 0 || c.st != "cycling" {
				t.Fatalf("probe cycle throttled within its quota: %s, period in (%v, %v], next probe after %d, overrun %d; want cycling in (42.4s, 42.6s], after 4, none",
					c.st, time.Duration(c.lo), time.Duration(c.hi), c.probeAfter, c.overrun)
			}
		})
	}
}

// TestCyclesProbeRestoreIgnoresTheAttemptOut: when the throttle that ends a probe's cycle arrives
// after the next cycle's attempt left (timed from the probe's bounds), the restored bounds stand:
// that attempt's admission opens no cycle with an upper bound below the lower one (found by review:
// the period then read (42.4 s, 10.6 s], and cycles started 4x too early).
func TestCyclesProbeRestoreIgnoresTheAttemptOut(t *testing.T) {
	l, c := learnerWith[cyclesStrategy](t)
	m := &l.m
	*c = cyclesStrategy{st: "cycling", quota: 4, lo: sec(42.4), hi: sec(42.6), width: sec(20),
		cycleStart: sec(100), sentInCycle: 4, opened: 2, probeAfter: 2}
	probe := sec(100) + c.lo/2
	c.sent(probe)
	c.observe(probe+sec(0.2), &Signal{Sent: probe, Answered: probe + sec(0.2)}, m) // admitted
	for range 3 {
		c.sent(probe + sec(0.2)) // the rest of the probe's cycle
	}
	next := probe + c.nextOffset()
	c.sent(next) // the next cycle's attempt leaves before the cycle's answers are all back
	c.observe(next+sec(0.1), &Signal{Sent: probe + sec(0.2), Answered: next + sec(0.1), Throttled: true}, m)
	c.observe(next+sec(0.2), &Signal{Sent: next, Answered: next + sec(0.2)}, m) // the attempt, admitted
	if c.lo != sec(42.4) || c.hi != sec(42.6) {
		t.Fatalf("period in (%v, %v], want the restored (42.4s, 42.6s]", time.Duration(c.lo), time.Duration(c.hi))
	}
}
