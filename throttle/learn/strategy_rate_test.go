package learn

import (
	"testing"
	"time"
)

// TestTrickleRecoverIsANewEpoch: when the cycles' test finds a quota that trickles back after a
// wall, the way back up starts from the pace that outlasted the wall, as a new epoch: its first
// request goes one spacing of that pace after the verdict, not at once into the quota the test's
// burst just spent. (Let go at once, that request drew a throttle, which the recover took as a
// refutation of the wall's pace: against a 100/min sliding window counter, 50 ms away, the
// estimate fell to 0.084/s and the run took 19x its physical time, one run in six.)
func TestTrickleRecoverIsANewEpoch(t *testing.T) {
	l, r := learnerWith[rateStrategy](t)
	m := &l.m
	// The trace's state: the startup's run of 96, a search cut at 0.555 s, then walls that halved
	// the pace ten times to 0.0844/s, the last at 12.9 s; the estimate is the search's 96/s.
	*r = rateStrategy{minR: r.minR, maxR: r.maxR, active: true, st: "recover", rate: 0.0844, best: 96,
		rCut: 86.4, wallRate: 0.0844, burst: 96, firstCutAt: sec(0.5), firstCutSuccesses: 96,
		cutAt: sec(12.91), cutSuccesses: 100, quiet: 650}
	m.successes = 101 // the one that came back
	m.trickled = true // the cycles' verdict at 24.862 s
	verdict := sec(24.862)
	r.observe(verdict, &Signal{Sent: sec(24.81), Answered: verdict}, m)
	if r.st != "recover" || r.rCut != 0.0844 {
		t.Fatalf("after the trickle: state %q from %.4g/s, want recover from the wall's pace 0.0844/s", r.st, r.rCut)
	}
	p := r.plan(verdict, m)
	if want := verdict + intervalOf(r.rate); p.hold < want {
		t.Fatalf("the first request after the verdict may go at %v, want no sooner than one spacing of %.4g/s after it (%v)",
			time.Duration(p.hold), r.rate, time.Duration(want))
	}
}
