package learn_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// TestAShareIsOfTheCountOnce: a client that shares a key spends its share of what the server
// says remains once, not again at every answer. Its own requests the server had not seen when it
// answered are its claims on that count, taken from its share already; the rest of the count is
// what the other clients left, and they spend their shares of it. Taken of the count less its own
// claims, each answer handed out the share of the others' unseen claims again: ten clients
// spending a tenth of every count they were told emptied a fixed window of 50/s within it and
// were refused at every reset (a third of all attempts behind 50 ms).
//
// The client's share is halved first (a throttle with credit left: another client spends the
// quota); then in a new window of 100 it is answered request by request, each answer two fewer
// (the other client takes as much as it does), across round trips of 1 and 50 ms.
func TestAShareIsOfTheCountOnce(t *testing.T) {
	for _, rttMs := range []int{1, 50} {
		l, events, ms := observedLearner(t)
		rtt := rttMs
		policy := `RateLimit-Policy: "w";q=100;w=60`
		say := func(left, reset int) string {
			return `RateLimit: "w";r=` + strconv.Itoa(left) + `;t=` + strconv.Itoa(reset)
		}
		send(t, l, ms(0))
		l.ObserveAttempt(ms(0), ms(rtt), resp(200, policy, say(99, 60)), nil)
		send(t, l, ms(rtt+1))
		l.ObserveAttempt(ms(rtt+1), ms(2*rtt+1), resp(429, policy, say(0, 58)), nil)
		if got := l.LearnedLimit(); got.Quota != 100 {
			t.Fatalf("rtt %d ms: learned %+v, want the declared 100", rtt, got)
		}

		// A new window: the first answer says 98 (the other client took one).
		now := 61_000
		send(t, l, ms(now))
		l.ObserveAttempt(ms(now), ms(now+rtt), resp(200, policy, say(98, 60)), nil)
		sent := 1
		var flight []int // send times of the requests not answered yet, oldest first
		at := now + rtt
		for step := 0; step < 200; step++ {
			// Everything due now goes.
			for waitFor(t, l, ms(at)) == 0 {
				flight = append(flight, at)
				sent++
			}
			if len(flight) == 0 {
				break
			}
			// The oldest is answered: the server counted all of this client's answered
			// requests, and as many of the other's.
			s := flight[0]
			flight = flight[1:]
			at = max(at+1, s+rtt)
			left := max(100-2*(sent-len(flight)), 0)
			l.ObserveAttempt(ms(s), ms(at), resp(200, policy, say(left, 59)), nil)
		}
		// Half of the window, and the request the reserve may keep back, at most; and at
		// least most of that half (a client that spent nothing would pass the first bound).
		if sent > 51 || sent < 45 {
			t.Errorf("rtt %d ms: a client with half the quota sent %d of a window of 100 (events %q)", rtt, sent, *events)
		}
		t.Logf("rtt %d ms: %d sent of a window of 100 with half of it", rtt, sent)
	}
}

// halvedShare returns a learner of a key declared 100 per minute whose share a throttle with
// credit left (another client spent the quota) halved n times, the clock (ms from its start) and
// the first instant after the last halving's pause, at a window's start.
func halvedShare(t *testing.T, n int) (*learn.Learner, func(int) time.Time, int) {
	t.Helper()
	l, _, ms := observedLearner(t)
	policy := `RateLimit-Policy: "w";q=100;w=60`
	for k := range n {
		at := k * 61_000
		send(t, l, ms(at))
		l.ObserveAttempt(ms(at), ms(at+1), resp(200, policy, `RateLimit: "w";r=99;t=60`), nil)
		send(t, l, ms(at+2))
		l.ObserveAttempt(ms(at+2), ms(at+3), resp(429, policy, `RateLimit: "w";r=0;t=60`, "Retry-After: 60"), nil)
	}
	if got, want := shareOf(l), math.Pow(0.5, float64(n)); got > 1.1*want { // the answers between grow it a little
		t.Fatalf("share %.4f after %d halvings, want about %.4f", got, n, want)
	}
	return l, ms, n * 61_000
}

// shareOf is the share of the declared 100 per minute that l paces at (its pace less the headroom).
func shareOf(l *learn.Learner) float64 {
	return l.Rate() * 60 / 100 / (1 - learn.DefaultTuning().Headroom)
}

// runWindows runs a client of l for windows of a minute from start, sending whatever it lets go,
// each answered a millisecond later with the remaining count left(sent in the window so far), and
// returns its share at the end of each window.
func runWindows(t *testing.T, l *learn.Learner, ms func(int) time.Time, start, windows int, left func(sent int) int) []float64 {
	t.Helper()
	policy := `RateLimit-Policy: "w";q=100;w=60`
	var shares []float64
	for w := range windows {
		sent := 0
		for now := start + w*60_000; now < start+(w+1)*60_000; now++ {
			if d := waitFor(t, l, ms(now)); d > 0 {
				now += int(d.Milliseconds())
				continue
			}
			sent++
			reset := strconv.Itoa((start + (w+1)*60_000 - now + 999) / 1000)
			l.ObserveAttempt(ms(now), ms(now+1), resp(200, policy, `RateLimit: "w";r=`+strconv.Itoa(left(sent))+`;t=`+reset), nil)
			now++
		}
		shares = append(shares, shareOf(l))
	}
	return shares
}

// TestAShareGrowsSlowlyAtTheQuotasEdge: where the others spend all but a thin cushion (10 of 100
// left once this client has sent its share of the window), the share grows in proportion to what
// the count says is left: by the probe's gain times at most (10 + its share's 12.5)/100 per window,
// not the whole gain, which made ten clients at the quota's edge outgrow it each window together
// (the twentieth of the quota that each added made half the quota more). The bound is twice that
// over ten windows: 0.225; the whole gain would be 0.5.
func TestAShareGrowsSlowlyAtTheQuotasEdge(t *testing.T) {
	l, ms, start := halvedShare(t, 3)
	from := shareOf(l)
	budget := int(math.Round(from * 100))
	shares := runWindows(t, l, ms, start, 10, func(sent int) int { return max(10+budget-sent, 0) })
	g := learn.DefaultTuning().ProbeGain
	// And it does grow: at least by the gain times the cushion alone (10 of 100), halved.
	if grown, least := shares[len(shares)-1]-from, 10*g*10/100/2; grown < least {
		t.Fatalf("share %.3f -> %.3f over ten windows (%.3f), want at least %.3f grown", from, shares[len(shares)-1], shares, least)
	}
	if grown, bound := shares[len(shares)-1]-from, 2*10*g*float64(10+budget)/100; grown > bound {
		t.Fatalf("share %.3f -> %.3f over ten windows (%.3f), want at most %.3f grown", from, shares[len(shares)-1], shares, bound)
	}
	t.Logf("share %.3f -> %.3f over ten windows (%.3f)", from, shares[len(shares)-1], shares)
}

// TestAShareGrowsInABucketSmallerThanItsLimit: a bucket declared as 100 per minute whose answers
// never say more than 9 left is full at 9, not at the quota's edge: a client alone there, its share
// halved, grows back by the whole gain, the count taken of the most any answer said. Of the
// declared 100 it read as a quota at its edge and grew a tenth as fast (0.5 -> 0.55 over 600
// answers). Over 600 answers at 9 of 10 left, each adding ProbeGain × 0.9/(share × 100) of a
// share, a share of at most 1 grows by at least 600 × 0.05 × 0.9/100 = 0.27: half of it is asked.
func TestAShareGrowsInABucketSmallerThanItsLimit(t *testing.T) {
	l, events, ms := observedLearner(t)
	quota := func(left string) []string {
		return []string{"X-RateLimit-Limit: 100", "X-RateLimit-Remaining: " + left, "X-RateLimit-Reset: 60"}
	}
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(1), resp(200, quota("9")...), nil)
	send(t, l, ms(2))
	l.ObserveAttempt(ms(2), ms(3), resp(429, quota("0")...), nil)
	from := shareOf(l)
	if from > 0.55 {
		t.Fatalf("share %.3f, want it halved (events %q)", from, *events)
	}
	now, answers := 60_000, 0
	for answers < 600 && now < 100*60_000 {
		if d := waitFor(t, l, ms(now)); d > 0 {
			now += int(d / time.Millisecond)
			continue
		}
		l.ObserveAttempt(ms(now), ms(now+1), resp(200, quota("9")...), nil)
		answers++
		now += 2
	}
	if grown, least := shareOf(l)-from, 600*0.05*0.9/100/2; grown < least {
		t.Fatalf("share %.3f -> %.3f over %d answers, want at least %.3f grown (events %q)", from, shareOf(l), answers, least, *events)
	}
}
