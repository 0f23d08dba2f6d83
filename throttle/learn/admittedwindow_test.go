package learn_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
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

// A bucket deeper than the limit its headers say
// (tollbooth's RateLimit-Limit is the rate, RateLimit-Remaining the tokens of a larger burst),
// whose window is read from whole-second resets longer than its own: the first shortening the
// admissions show changes the said window, which resets mostLeft ("a new quota said"), so the
// next hold is 2·max(L, Remaining+1) with the bucket's depth forgotten while the log still holds
// its bursts. The bound then reads far above the server's rate (14 admitted in 1.26 ms: a window
// of 2 ms for 5 per 250 ms), and the client is throttled on almost every other request.
func TestADeepBucketKeepsItsHoldAfterTheWindowShortens(t *testing.T) {
	for _, c := range []cell{
		{"token-bucket", 5, 250 * time.Millisecond, 20, "constant-reset", time.Millisecond, 16, 300},
		{"leaky-bucket", 5, 250 * time.Millisecond, 20, "constant-reset", time.Millisecond, 16, 300},
		{"token-bucket", 20, 250 * time.Millisecond, 80, "constant-reset", time.Millisecond, 1, 600},
		{"token-bucket", 20, 250 * time.Millisecond, 80, "constant-reset", time.Millisecond, 16, 600},
		{"token-bucket", 5, 500 * time.Millisecond, 20, "constant-reset", time.Millisecond, 16, 300},
	} {
		for seed := uint64(1); seed <= 2; seed++ {
			o := runCell(t, c, seed)
			desc := fmt.Sprintf("%s %d/%v burst %d, %s, rtt %v, %d workers, seed %d: %.3fx, %.2f%% throttled, learned %d/%v",
				c.alg, c.limit, c.window, c.burst, c.headers, c.rtt, c.workers, seed,
				float64(o.elapsed)/float64(physical(c)), 100*o.share(), o.limit.Quota, o.limit.Window)
			learned := float64(o.limit.Quota) / float64(max(o.limit.Window, 1))
			if o.share() > 0.005 || learned > float64(c.limit)/float64(c.window) {
				t.Errorf("%s; want at most 0.5%% throttled and no rate learned above the server's", desc)
				continue
			}
			t.Log(desc)
		}
	}
}

// switchAlg is a server whose rate changes at an instant: before it, a decides; from it, b does,
// from a fresh (full) state. The limit its headers say (the burst, for "burst-limit") need not
// change.
type switchAlg struct {
	a, b   algorithm.Algorithm
	at     time.Time
	every  time.Duration // when positive, a and b take turns from at on, each for this long
	sa, sb algorithm.State
}

func (s *switchAlg) cur(now time.Time) (algorithm.Algorithm, *algorithm.State) {
	if now.Before(s.at) || (s.every > 0 && now.Sub(s.at)/s.every%2 == 1) {
		return s.a, &s.sa
	}
	return s.b, &s.sb
}
func (s *switchAlg) Name() string          { return s.b.Name() }
func (s *switchAlg) Limit() int64          { return s.b.Limit() }
func (s *switchAlg) Window() time.Duration { return s.b.Window() }
func (s *switchAlg) Burst() int64          { return s.b.Burst() }
func (s *switchAlg) Decide(_ *algorithm.State, now time.Time, n int64) algorithm.Decision {
	a, st := s.cur(now)
	return a.Decide(st, now, n)
}
func (s *switchAlg) Commit(_ *algorithm.State, now time.Time, n int64) {
	a, st := s.cur(now)
	a.Commit(st, now, n)
}
func (s *switchAlg) Idle(_ *algorithm.State, now time.Time) bool { return false }

// A bucket of throttled's headers (its burst as the limit, the time
// until full in whole seconds rounded up as the reset) whose rate falls while its burst, the limit
// it says, stays: the admissions at the old rate set windowAdmitted, which a limit said unchanged
// never resets, and the longer resets after the fall only floor it at "the longest reset less its
// grain", 1 s + 1 ns for a reset of "2": 5/s against 3/s, 0.74-1.32% throttled (a review's
// finding). A refusal at the pace the admissions showed now gives their window up.
func TestARateThatFallsUnderTheSameLimit(t *testing.T) {
	for _, newRate := range []int64{3, 4} {
		for _, workers := range []int{1, 4} {
			c := cell{"token-bucket", 20, time.Second, 5, "burst-limit", time.Millisecond, workers, 1200}
			var fallAt time.Duration
			o := runCellWith(t, c, 1, func(s *simServer) {
				slow, err := algorithm.New("token-bucket", algorithm.Config{Limit: newRate, Window: time.Second, Burst: 5})
				if err != nil {
					t.Fatal(err)
				}
				fallAt = 20 * time.Second // 400 requests at 20/s, then 800 at the new rate
				s.alg = &switchAlg{a: s.alg, b: slow, at: s.start.Add(fallAt)}
			})
			var after int
			for _, at := range o.admittedAt {
				if at >= fallAt {
					after++
				}
			}
			desc := fmt.Sprintf("burst 5 at 20/s, then %d/s from %v, %d workers: %d throttled of %d attempts (%.2f%%), %d admitted after the fall, elapsed %v, learned %d/%v",
				newRate, fallAt, workers, o.denied, o.attempts, 100*o.share(), after, o.elapsed.Round(time.Millisecond), o.limit.Quota, o.limit.Window)
			if o.share() > 0.005 || float64(o.limit.Quota)/float64(max(o.limit.Window, 1)) > float64(newRate)/float64(time.Second) {
				t.Errorf("%s; want at most 0.5%% throttled and no rate learned above the server's", desc)
				continue
			}
			t.Log(desc)
		}
	}
}

// A rate that comes and goes under the same limit (throttled's headers, burst 5: 20/s and 3/s in
// turns of 20 s): each fast turn shows the admissions' window again, and each slow one refuses its
// pace. A refusal gives the window up and the next needs a whole log of admissions, twice as many
// after each: the k-th refusal comes at least 1,024·(2^(k-1) − 1) admissions after the first, so
// 3,000 requests see at most 3. The price is time at the window read (5 per 2 s here): 12m50s,
// against 4m53s and 7 refusals when the admissions were counted afresh after each refusal, and
// 7 min and 5 refusals when 200 (the DeclaredBudget's) were waited for; the longer wait is what
// keeps two clients on one key apart (docs/learner-measurements.md, seventh session).
func TestARateThatComesAndGoesIsRefusedSeldom(t *testing.T) {
	for _, workers := range []int{1, 4} {
		c := cell{"token-bucket", 20, time.Second, 5, "burst-limit", time.Millisecond, workers, 3000}
		o := runCellWith(t, c, 1, func(s *simServer) {
			slow, err := algorithm.New("token-bucket", algorithm.Config{Limit: 3, Window: time.Second, Burst: 5})
			if err != nil {
				t.Fatal(err)
			}
			s.alg = &switchAlg{a: s.alg, b: slow, at: s.start.Add(20 * time.Second), every: 20 * time.Second}
		})
		turns := int(o.elapsed / (20 * time.Second))
		desc := fmt.Sprintf("20/s and 3/s in turns of 20 s, %d workers: %d refused of %d attempts over %d turns, elapsed %v",
			workers, o.denied, o.attempts, turns, o.elapsed.Round(time.Second))
		if o.lost != 0 || o.denied > 3 || turns < 8 {
			t.Errorf("%s; want nothing lost and at most 3 refused over at least 8 turns", desc)
			continue
		}
		t.Log(desc)
	}
}
