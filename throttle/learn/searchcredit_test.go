package learn_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// TestTheSearchOutlastsTheCreditItRefilled: the search that follows the first throttle starts
// from an empty bucket, but its first paces are under the server's rate, and the bucket refills
// meanwhile. A doubling confirmed by fewer successes than that credit carries holds a pace the
// server does not sustain: against 100/s with a burst of 10, doubling every four successes from
// 9/s held 480/s, and the way down cost a throttle per tenth. Across rates and bursts, a sender
// that keeps up with the law's pace (and waits a spacing after each cut) against a token bucket:
// the estimate the search leaves is within its doubling of the rate (a held pace p says the rate
// is above p/2, so no held pace is above twice the rate), or at the prior (the burst taken as per
// second: a throttle at the prior says the limit is at it, see TestRateLawOneCutPerEpoch). Where
// the pace refuted keeps more than one request in flight (twice the rate or more, times the trip),
// no bisection follows and the estimate is the rate admitted at the refuted pace, within the
// bracket: below the pace refuted, at most four times the rate.
func TestTheSearchOutlastsTheCreditItRefilled(t *testing.T) {
	for _, rate := range []float64{5, 50, 100, 1000} {
		for _, burst := range []float64{1, 10, 50} {
			t.Run(fmt.Sprintf("rate=%v/burst=%v", rate, burst), func(t *testing.T) {
				l, err := learn.NewRateLaw(1)
				if err != nil {
					t.Fatal(err)
				}
				const trip = time.Millisecond
				t0 := time.Unix(1_700_000_000, 0)
				credit, last := burst, t0 // the server's bucket, full at first
				at := t0
				throttles, sends, worst, prior := 0, 0, 0.0, 0.0
				for sends < 4000 && at.Sub(t0) < 120*time.Second {
					credit = math.Min(burst, credit+rate*at.Sub(last).Seconds())
					last = at
					sends++
					l.ObserveRoundTrip(at, at.Add(trip))
					if credit >= 1 {
						credit--
						l.Admit(at.Add(trip), 1)
					} else {
						throttles++
						l.Throttle(at, at.Add(trip))
						if prior == 0 {
							prior = l.Rate()
						}
					}
					worst = math.Max(worst, l.Estimate())
					spacing := time.Duration(float64(time.Second) / l.Rate())
					next := at.Add(spacing)
					if c := l.LastCut(); !c.IsZero() && next.Before(c.Add(spacing)) {
						next = c.Add(spacing)
					}
					at = next
				}
				t.Logf("%d sends, %d throttled (%.1f%%); highest estimate %.3g/s; pace %.3g/s (%s)",
					sends, throttles, 100*float64(throttles)/float64(sends), worst, l.Rate(), l.State())
				bound := 2 * rate
				if 2*rate*trip.Seconds() > 1 { // every refuted pace keeps more than one in flight
					bound = 4 * rate
				}
				if worst > max(bound, prior) {
					t.Errorf("the estimate reached %.3g/s against a rate of %v/s (prior %.3g/s): above %.3g/s, more than the search's evidence allows", worst, rate, prior, bound)
				}
			})
		}
	}
}

// TestTheSearchOfABurstOfOneDoublesEverySuccess: a burst of one holds no credit beyond the unit
// a success takes, so its search still doubles every success (nginx's limit_req without a burst):
// from a prior of 1/s to 64/s in six. Counting that unit as credit took fourteen.
func TestTheSearchOfABurstOfOneDoublesEverySuccess(t *testing.T) {
	l, err := learn.NewRateLaw(1)
	if err != nil {
		t.Fatal(err)
	}
	const trip = time.Millisecond
	t0 := time.Unix(1_700_000_000, 0)
	l.ObserveRoundTrip(t0, t0.Add(trip))
	l.Admit(t0.Add(trip), 1)
	at := t0.Add(10 * time.Millisecond)
	l.Throttle(at, at.Add(trip)) // the prior: 1/s, a burst of one
	if l.Rate() != 1 {
		t.Fatalf("prior %v/s, want 1/s", l.Rate())
	}
	n := 0
	for l.Rate() < 64 && n < 100 {
		at = at.Add(time.Duration(float64(time.Second) / l.Rate()))
		l.ObserveRoundTrip(at, at.Add(trip))
		l.Admit(at.Add(trip), 1)
		n++
	}
	if n != 6 {
		t.Errorf("a burst of one: %d successes from 1/s to 64/s, want 6 (one a doubling)", n)
	}
}

// TestARefutedStepShorterThanAMeasureKeepsThePaceHeld: the measure of the admitted rate lowers
// the estimate a refuted search leaves only where the refuted step drew a whole measure itself.
// Steps of two successes (a run of two before the first throttle) put the last eight successes
// over four doublings, whose slower paces averaged into a rate the server never refused: three
// processes sharing a burst of one came down to a third of the pace they held.
func TestARefutedStepShorterThanAMeasureKeepsThePaceHeld(t *testing.T) {
	l, err := learn.NewRateLaw(1)
	if err != nil {
		t.Fatal(err)
	}
	const trip = time.Millisecond
	t0 := time.Unix(1_700_000_000, 0)
	l.ObserveRoundTrip(t0, t0.Add(trip))
	l.Admit(t0.Add(trip), 2)
	at := t0.Add(10 * time.Millisecond)
	l.Throttle(at, at.Add(trip)) // the prior: 2/s, steps of two
	held := 0.0
	for l.Rate() < 64 {
		held = l.Rate()
		at = at.Add(time.Duration(float64(time.Second) / l.Rate()))
		l.ObserveRoundTrip(at, at.Add(trip))
		l.Admit(at.Add(trip), 1)
	}
	// The first send at 64/s is refused: the rate lies between the pace held and 64/s.
	at = at.Add(time.Duration(float64(time.Second) / l.Rate()))
	l.Throttle(at, at.Add(trip))
	if got := l.Estimate(); got < held {
		t.Fatalf("refused at 64/s after holding %v/s: estimate %.3g/s, below the pace held", held, got)
	}
}
