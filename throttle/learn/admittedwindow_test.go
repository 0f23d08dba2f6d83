package learn_test

import (
	"fmt"
	"testing"
	"time"
)

// A bucket full again in well under a second whose resets are written in whole seconds rounded up
// (throttled/throttled v2's GCRA: its burst as the limit, the time until full as the reset) says a
// second, and its burst per second was the pace: 2.5x the server's rate at 20/s with a burst of 5,
// 2.8x at 50/s with 16, 5.6x at 100/s with 10. What it admits shows more, and the window follows
// (admittedLog). Where learning it takes a small part of the run, the run meets the goals.
func TestABucketFasterThanItsResetsIsLearned(t *testing.T) {
	for _, c := range []struct {
		cell
		met bool // whether the cell meets the 1.10x goal (known misses: docs/learner-measurements.md)
	}{
		{cell{"token-bucket", 20, time.Second, 5, "burst-limit", time.Millisecond, 1, 500}, true},
		{cell{"token-bucket", 20, time.Second, 5, "burst-limit", time.Millisecond, 4, 500}, true},
		{cell{"leaky-bucket", 20, time.Second, 5, "burst-limit", time.Millisecond, 4, 500}, true},
		{cell{"token-bucket", 20, time.Second, 5, "burst-limit", 50 * time.Millisecond, 16, 500}, true},
		{cell{"token-bucket", 100, time.Second, 10, "burst-limit", time.Millisecond, 16, 1000}, true},
		// The first bound above the pace needs 2L admissions beyond it: at a burst of 16, some
		// 250 admissions (13 s of 60) go at the second's pace.
		{cell{"token-bucket", 50, time.Second, 16, "burst-limit", time.Millisecond, 16, 3000}, false},
		// Behind 200 ms, the credit the counts give is a round trip old and mostly kept back:
		// the admissions outgrow the pace slowly.
		{cell{"token-bucket", 20, time.Second, 5, "burst-limit", 200 * time.Millisecond, 64, 500}, false},
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			o := runCell(t, c.cell, seed)
			ratio := float64(o.elapsed) / float64(physical(c.cell))
			desc := fmt.Sprintf("%s %d/%v burst %d, rtt %v, %d workers, %d requests, seed %d: %.3fx, %.2f%% throttled, learned %+v",
				c.alg, c.limit, c.window, c.burst, c.rtt, c.workers, c.n, seed, ratio, 100*o.share(), o.limit)
			if o.lost != 0 || o.share() > 0.005 || (c.met && ratio > 1.10) {
				t.Errorf("%s; want nothing lost, at most 0.5%% throttled and, where met, at most 1.10x", desc)
				continue
			}
			if rate := float64(o.limit.Quota) / float64(o.limit.Window); rate > float64(c.limit)/float64(c.window) {
				t.Errorf("%s; learned more than the server's rate", desc)
				continue
			}
			t.Log(desc)
		}
	}
}

// Where the window read from the resets is the server's, nothing it admits reads shorter: at L per
// second, of every kind, in the three header sets whose resets are all a window can be told by
// (httprate's, tollbooth's, throttled's with its burst at the rate), the window learned is never
// under the second.
func TestAnHonestWindowIsNotShortened(t *testing.T) {
	for _, alg := range []string{"token-bucket", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window"} {
		for _, headers := range []string{"burst-limit", "constant-reset", "window-end"} {
			for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond} {
				for _, limit := range []int64{5, 20} {
					c := cell{alg, limit, time.Second, limit, headers, rtt, 16, 40 * int(limit)}
					o := runCell(t, c, 1)
					desc := fmt.Sprintf("%s %d/s, %s headers, rtt %v: learned %+v", alg, limit, headers, rtt, o.limit)
					if o.lost != 0 || (o.limit.Window > 0 && o.limit.Window < time.Second) {
						t.Errorf("%s; want nothing lost and no window under the server's second", desc)
					}
				}
			}
		}
	}
}
