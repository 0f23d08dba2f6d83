package learn_test

import (
	"testing"
	"time"
)

// TestQuotaSpentAtStartComesBackWhole: a job that starts after another job spent the key's quota
// (a GitHub token used up by the job before) finds a fixed window spent, its reset 1.3 s away: the
// job must spend each window's quota at its reset. Two windows' work took twice as long (60 s
// against 31 s in real time against testserver's GitHub persona; the learner, whose first request
// after the Retry-After went past the reset and was admitted, reads the window as a quota that
// refills, and still does: the test asserts the time, not the kind). The cause was the window of
// sends (at most the limit in any window, as a sliding log needs): the
// refused request held a place in it, so the last request of every window waited for the window
// after; a refused send now gives its place back (Pacer.Refused). Across round trips and workers,
// the job must lose nothing, draw no more than 0.5% throttles beyond the first answers, and take at
// most 1.10x a client that spends each window's quota at its reset, but for one known miss, bounded:
// the Retry-After says whole seconds (2 s for 1.3 s), the first window's quota goes at its end, and
// the window of sends holds the next window's quota until a window after it, carrying the rounding
// (0.7 s) into the next window. A cap of that window at the reset the server said was tried and
// cost the grid's sliding logs more (docs/learner-measurements.md, stop 21).
func TestQuotaSpentAtStartComesBackWhole(t *testing.T) {
	const limit, window = 100, 10 * time.Second
	const toReset = 1300 * time.Millisecond
	carry := toReset.Truncate(time.Second) + time.Second - toReset // the Retry-After's rounding up
	for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond} {
		for _, workers := range []int{4, 16} {
			c := cell{"fixed-window", limit, window, limit, "honest", rtt, workers, 2 * limit}
			o := runCellWith(t, c, 1, func(s *simServer) {
				time.Sleep(window - toReset) // the window's last 1.3 s
				s.alg.Commit(&s.st, time.Now(), limit)
			})
			// At best: the first window's quota at its reset, the second's a window later, each
			// the round trips of its requests after it.
			trips := time.Duration((limit+workers-1)/workers) * (rtt + rtt/10)
			best := toReset + window + trips
			ratio := float64(o.elapsed) / float64(best)
			throttled := o.denied - int64(workers) // the first answers: the quota was spent
			t.Logf("rtt %v, %d workers: %.3fx of %v, %d throttled (%d attempts), lost %d, learned %+v",
				rtt, workers, ratio, best, o.denied, o.attempts, o.lost, o.limit)
			goal := time.Duration(1.10 * float64(best))
			if o.lost != 0 || o.elapsed > goal+carry || float64(throttled) > 0.005*float64(o.attempts) {
				t.Errorf("rtt %v, %d workers: %.3fx, %d throttled of %d attempts, lost %d; want at most 1.10x (and the rounding %v carried), 0.5%% beyond the first %d, none lost; events %q",
					rtt, workers, ratio, o.denied, o.attempts, o.lost, carry, workers, o.events)
			} else if o.elapsed > goal {
				t.Logf("rtt %v, %d workers: the known miss, %v over 1.10x (the Retry-After's rounding carried, at most %v)",
					rtt, workers, o.elapsed-goal, carry)
			}
		}
	}
}
