package learn_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// A quota of one whose rate falls mid-run (throttled v2 without a burst says "1", "1 s" at any
// rate): the window the probe found only ever shrank, and nothing gave it up (9 refusals, 1.41x,
// 15/s learned against 2/s). A refusal at the pace it found gives it up (quotaOfOneProbe.refused).
func TestAQuotaOfOneWhoseRateFalls(t *testing.T) {
	for _, f := range []struct {
		limit  int64
		window time.Duration
		n      int
	}{{2, time.Second, 600}, {1, 3 * time.Second, 300}} {
		for _, workers := range []int{1, 4} {
			c := cell{"token-bucket", 20, time.Second, 1, "burst-limit", time.Millisecond, workers, f.n}
			fallAt := 10 * time.Second
			o := runCellWith(t, c, 1, func(s *simServer) {
				slow, err := algorithm.New("token-bucket", algorithm.Config{Limit: f.limit, Window: f.window, Burst: 1})
				if err != nil {
					t.Fatal(err)
				}
				s.alg = &switchAlg{a: s.alg, b: slow, at: s.start.Add(fallAt)}
			})
			var after int
			for _, at := range o.admittedAt {
				if at >= fallAt {
					after++
				}
			}
			// The least time: the fall, then those admitted after it at the new rate.
			least := fallAt + time.Duration(int64(after)/f.limit)*f.window
			desc := fmt.Sprintf("burst 1 at 20/s, then %d/%v from %v, %d workers: %d refused of %d attempts (%.2f%%), %d admitted after, elapsed %v (%.2fx the least), learned %+v",
				f.limit, f.window, fallAt, workers, o.denied, o.attempts, 100*o.share(), after, o.elapsed.Round(time.Millisecond), float64(o.elapsed)/float64(least), o.limit)
			// Where the resets tell the new window (1 per 3 s says "3"), the learner without the
			// probe meets it (1.00x, 1 refusal); under the same resets (2/s says "1") nothing but a
			// refusal can tell it, and a rate learned above the server's is still wrong.
			slow := f.window > time.Second && float64(o.elapsed) > 1.10*float64(least)
			if slow || o.share() > 0.03 || float64(o.limit.Quota)/float64(max(o.limit.Window, 1)) > float64(f.limit)/float64(f.window) {
				t.Errorf("%s; want at most 3%% refused, no rate learned above the server's and, where the resets tell the window, at most 1.10x", desc)
				logEventsOf(t, o.events, "probe", "share", "declared 1/")
				continue
			}
			t.Log(desc)
		}
	}
}

// A fixed window of one a second (a limit of 1, its resets within their grain, so the probe
// applies) whose windows are off the second: two admissions a test's gap apart can straddle a
// window's end, and the probe took their gap (plus the margin) for the window; the pace stayed
// above the server's for good (23 % refused with the X-RateLimit triple, windows 800 ms off). A
// refusal at the pace the probe found gives it up, and the next probe waits twice as long: at
// most the DeclaredBudget's 0.5 % over 1,000 requests, and never a rate above the server's.
func TestAFixedWindowOfOneIsNotProbedAway(t *testing.T) {
	for _, k := range []struct {
		headers string
		offset  time.Duration
	}{{"burst-limit", 950 * time.Millisecond}, {"x-ratelimit", 800 * time.Millisecond}} {
		c := cell{"fixed-window", 1, time.Second, 1, k.headers, time.Millisecond, 16, 1000}
		o := runCellWith(t, c, 1, func(s *simServer) { s.offset = k.offset })
		desc := fmt.Sprintf("fixed window 1/s, %s headers, windows %v off the second: %d refused of %d (%.2f%%), %.3fx, learned %+v",
			k.headers, k.offset, o.denied, o.attempts, 100*o.share(), float64(o.elapsed)/float64(physical(c)), o.limit)
		if o.share() > 0.005 || float64(o.limit.Quota)/float64(max(o.limit.Window, 1)) > 1.0/float64(time.Second) {
			t.Errorf("%s; want at most 0.5%% refused and no rate learned above the server's", desc)
			logEventsOf(t, o.events, "probe", "share", "kind")
			continue
		}
		t.Log(desc)
	}
}

// While a probe's test runs, the pace is the window under test, which may be refused: the learned
// limit reports the shortest window the admissions showed instead (reportedWindow). Here the
// bisection's test of 46.96 ms (the geometric middle of 66.4 and 33.2 ms) against a 50 ms bucket
// begins near the end of the run (trips made longer every 13th leg slow the learner, so the second
// test comes late); reported as the limit, it read 21.3/s against 20/s.
func TestATestUnderWayIsNotTheLearnedLimit(t *testing.T) {
	c := cell{"token-bucket", 20, time.Second, 1, "burst-limit", time.Millisecond, 4, 600}
	o := runCellWith(t, c, 1, func(s *simServer) { s.spikeEvery, s.spike = 13, 40*time.Millisecond })
	desc := fmt.Sprintf("20/s burst 1, a trip leg 40ms late every 13th: %d refused of %d (%.2f%%), %.3fx, learned %+v",
		o.denied, o.attempts, 100*o.share(), float64(o.elapsed)/float64(physical(c)), o.limit)
	if float64(o.limit.Quota)/float64(max(o.limit.Window, 1)) > 20.0/float64(time.Second) {
		t.Errorf("%s; learned more than the server's rate; last events %q", desc, o.events[max(len(o.events)-2, 0):])
		return
	}
	t.Log(desc)
}

// What the probe found is of a quota of one and this client alone: a limit other than one said
// next forgets it. It was kept, and a quota of ten per second said after a quota of one probed to
// tens of milliseconds was paced at ten per the probe's window (321/s).
func TestWhatTheProbeFoundIsForgottenWithItsQuota(t *testing.T) {
	l, events, _ := observedLearner(t)
	one := []string{"X-RateLimit-Limit: 1", "X-RateLimit-Remaining: 0", "X-RateLimit-Reset: 1"}
	at := time.Unix(1_700_000_000, 0)
	var last time.Time // a bucket of one refilling in 20 ms, alone on the key
	for i := 0; i < 60; i++ {
		if d := waitFor(t, l, at); d > 0 { // a reservation due at once is the send
			at = at.Add(d)
			send(t, l, at)
		}
		if !last.IsZero() && at.Sub(last) < 20*time.Millisecond {
			l.ObserveAttempt(at, at.Add(time.Millisecond), resp(429, append(one, "Retry-After: 1")...), nil)
		} else {
			last = at
			l.ObserveAttempt(at, at.Add(time.Millisecond), resp(200, one...), nil)
		}
		at = at.Add(time.Millisecond)
	}
	probed := l.LearnedLimit()
	if probed.Quota != 1 || probed.Window >= 500*time.Millisecond {
		t.Fatalf("after the probe: %+v, want a quota of one probed well under a second (the test tests nothing); events %q", probed, *events)
	}
	for i := 0; i < 5; i++ { // a bucket of 10 at 10/s, in throttled's headers
		if d := waitFor(t, l, at); d > 0 {
			at = at.Add(d)
			send(t, l, at)
		}
		l.ObserveAttempt(at, at.Add(time.Millisecond), resp(200, "X-RateLimit-Limit: 10", "X-RateLimit-Remaining: 9", "X-RateLimit-Reset: 1"), nil)
		at = at.Add(time.Second)
	}
	if got := l.LearnedLimit(); float64(got.Quota)/got.Window.Seconds() > 10.001 {
		t.Errorf("probed %+v, then a quota of 10 with resets of 1 s: learned %+v, want at most 10/s", probed, got)
	}
}

// logEventsOf logs the events that mention any of the words, to explain a failure.
func logEventsOf(t *testing.T, events []string, words ...string) {
	t.Helper()
	for _, e := range events {
		for _, w := range words {
			if strings.Contains(e, w) {
				t.Log("   ", e)
				break
			}
		}
	}
}
