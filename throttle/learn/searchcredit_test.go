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
// second: a throttle at the prior says the limit is at it, see TestRateLawOneCutPerEpoch).
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
				if worst > max(2*rate, prior) {
					t.Errorf("the estimate reached %.3g/s against a rate of %v/s (prior %.3g/s): more than the doubling that held it", worst, rate, prior)
				}
			})
		}
	}
}
