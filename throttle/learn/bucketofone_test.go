package learn_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// paceBurstOne is the least time a client that keeps the model's jitter margin needs for a cell
// whose bucket holds one request. The server admits no two requests closer than its spacing, and
// a client that cannot foresee the jitter of each trip must leave the trips' spread between two
// sends, or the second may arrive early and be refused. The simulator's legs are late by up to
// J = rtt/10 each, uniformly: the spread is J, and the learner, which sees round trips only, leaves
// Tuning.JitterMargin mean deviations of the round trip, J/3 each (docs/learner.md), so 4J/3. Never
// less than the workers' round trips allow (see physical).
func paceBurstOne(c cell) time.Duration {
	j := float64(c.rtt / 10)
	per := float64(c.window)/float64(c.limit) + learn.DefaultTuning().JitterMargin*j/3
	d := time.Duration(float64(c.n-1) * per)
	trip := c.rtt + c.rtt/10
	rounds := (c.n + c.workers - 1) / c.workers
	return max(d, time.Duration(rounds)*trip) + trip
}

// TestBucketOfOneCarriesTheJitter runs buckets that hold a single request (x/time/rate with a
// burst of 1, as tollbooth uses it) at 3, 10 and 50 a second, with honest headers and with
// tollbooth's (the limit per second, the tokens left, a constant reset of one second, no
// Retry-After), round trips of 1, 50 and 200 ms, 4 and 16 workers, 300 requests, three seeds.
// Such a bucket cannot keep a request back against the jitter, so two paced requests that the
// jitter brings closer than the spacing collide; one collision halved the share as if another
// client spent the quota, and nothing could show spare to bring it back (2x at 10/s behind 50 ms,
// 0.3-0.7% throttled). Every cell must lose nothing, throttle at most 0.5% of its attempts (the
// goal with honest headers), and finish within 1.10x of the least time a client that keeps the
// model's margin between its sends needs (paceBurstOne), but for one known miss: at 50/s behind
// 50 ms (a one-way spread of 5 ms, a quarter of the spacing) the round trip's deviation runs low
// for a few answers now and then, and one request in some 600 arrives too close. Alone, such a
// collision looks like another client's: the whole second of its Retry-After is 50 spacings, and
// the share halves and climbs back over 1/DeclaredBudget answers, (2 ln 2 - 1)/DeclaredBudget =
// 77 spacings more than at the full rate. There each cell may draw one throttle and take that
// much longer, no more (1.24-1.36x on one seed of three, logged). Worker-bound cells are left
// out: the reference does not model how the workers' trips and the bucket's spacing interleave.
func TestBucketOfOneCarriesTheJitter(t *testing.T) {
	knownMiss := func(c cell) bool { return c.limit == 50 && c.rtt == 50*time.Millisecond }
	collision := func(c cell) float64 { // a collision's cost, in units of the least time
		per := float64(paceBurstOne(c)) / float64(c.n)
		climb := (2*math.Ln2 - 1) / learn.DefaultTuning().DeclaredBudget
		return (float64(time.Second) + climb*per) / float64(paceBurstOne(c))
	}
	for _, alg := range []string{"token-bucket", "leaky-bucket"} {
		for _, headers := range []string{"honest", "constant-reset"} {
			for _, rate := range []int64{3, 10, 50} {
				for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond} {
					for _, workers := range []int{4, 16} {
						c := cell{alg, rate, time.Second, 1, headers, rtt, workers, 300}
						if float64(workers)/rtt.Seconds() < 2*float64(rate) {
							continue // worker-bound (the label)
						}
						for seed := uint64(1); seed <= 3; seed++ {
							o := runCell(t, c, seed)
							ratio := float64(o.elapsed) / float64(paceBurstOne(c))
							desc := fmt.Sprintf("%s %d/s burst 1, %s headers, rtt %v, %d workers, seed %d", alg, rate, headers, rtt, workers, seed)
							if knownMiss(c) && o.lost == 0 && o.denied <= 1 && ratio > 1.10 && ratio <= 1.10+collision(c) {
								t.Logf("%s: %.3fx the least time, %d throttled (a known miss: at most %.3fx with one collision)",
									desc, ratio, o.denied, 1.10+collision(c))
								continue
							}
							if o.lost != 0 || ratio > 1.10 || o.share() > 0.005 {
								t.Errorf("%s: lost %d, %.3fx the least time, %.2f%% throttled; want 0, at most 1.10x and 0.5%%",
									desc, o.lost, ratio, 100*o.share())
								for _, e := range o.events {
									t.Log("   ", e)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestShareRegrowsWhereNoSpareShows refuses one request at the pace of a quota whose answers can
// never say more is left than the client keeps back, as a request of another client would take its
// place once: a bucket that holds one (10 a second, tollbooth's headers, 1 ms) and one of 3 (3 a
// second, honest headers, 50 ms), 4 workers, 600 requests, three seeds. The share halves, as it
// must when another client spends the quota; then no answer can show the spare that grows it
// back, and it stayed halved for good (the rest of the run at half the rate; after the halving
// for a throttle with credit left, which the bucket of 3 draws, until a fix of 2026-11-27 too). It
// must climb back: the last 100 requests are admitted at the bucket's rate (their spacing at most
// 1.10x of its spacing), nothing is lost, and the refusal is the only throttle.
func TestShareRegrowsWhereNoSpareShows(t *testing.T) {
	for _, c := range []cell{
		{"token-bucket", 10, time.Second, 1, "constant-reset", time.Millisecond, 4, 600},
		{"token-bucket", 3, time.Second, 3, "honest", 50 * time.Millisecond, 4, 600},
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			o := runCellWith(t, c, seed, func(s *simServer) { s.refuseNth = 50 })
			desc := fmt.Sprintf("%d/s burst %d, %s headers, rtt %v, seed %d", c.limit, c.burst, c.headers, c.rtt, seed)
			halved := false
			for _, e := range o.events {
				halved = halved || strings.Contains(e, "share -> 0.5")
			}
			if !halved {
				t.Fatalf("%s: the refusal did not halve the share: the test tests nothing; events %q", desc, o.events)
			}
			at := o.admittedAt
			if len(at) < 100 {
				t.Fatalf("%s: %d admitted, want at least 100", desc, len(at))
			}
			spacing := (at[len(at)-1] - at[len(at)-100]) / 99
			want := c.window / time.Duration(c.limit) * 110 / 100
			if o.lost != 0 || o.denied != 1 || spacing > want {
				t.Errorf("%s: lost %d, %d throttled, the last 100 admitted %v apart; want 0, 1 and at most %v",
					desc, o.lost, o.denied, spacing, want)
				for _, e := range o.events {
					t.Log("   ", e)
				}
			}
		}
	}
}

// tollbooth is what didip/tollbooth v7 writes over x/time/rate at 10 a second with a burst of 1
// (tollbooth.go, setRateLimitResponseHeaders): the rate as the limit, the tokens left, and a
// constant reset of one second; its 429 carries no Retry-After.
var tollbooth = []string{"RateLimit-Limit: 10", "RateLimit-Remaining: 0", "RateLimit-Reset: 1", "X-Rate-Limit-Duration: 1", "X-Rate-Limit-Limit: 10.00"}

// TestLateSendSpacesTheNextAgainstABucketOfOne: a bucket whose answers never say a request left
// (tollbooth's at a burst of 1) cannot absorb two requests closer than its spacing; the request
// behind one that went 50 ms late goes a whole spacing after it, not on its own schedule.
func TestLateSendSpacesTheNextAgainstABucketOfOne(t *testing.T) {
	l, _, ms := observedLearner(t)
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(10), resp(200, tollbooth...), nil)
	a, _ := l.Reserve(ms(11))
	b, _ := l.Reserve(ms(11))
	gap := b.Delay(ms(11)) - a.Delay(ms(11)) // the spacing
	if gap < 100*time.Millisecond {
		t.Fatalf("requests spaced %v, want at least the bucket's 100ms", gap)
	}
	went := ms(11).Add(a.Delay(ms(11))).Add(50 * time.Millisecond)
	l.ObserveLateness(went, 50*time.Millisecond)
	if got := b.Delay(went); got < gap-time.Millisecond {
		t.Fatalf("the request behind one that went 50 ms late is due %v after it, want a spacing (%v)", got, gap)
	}
}

// TestHeaderlessBucketOfOneBisects runs buckets that hold one request and say nothing but 429
// (nginx's limit_req without burst, x/time/rate with a burst of 1) at 10, 20 and 50 a second, 16
// workers, a 1 ms round trip (a refuted test costs one throttle: the bisection runs), 300
// requests, three seeds. Such a bucket refuses any pace over its rate by the first or second send,
// however close to the rate, so a quick refusal of the bisection's test says nothing of the
// bracket's lower end; taken as a refusal of it, the test of 11.3/s against 10/s ended the
// search at 8/s (1.35x). The learned rate must be within the bisection's precision
// (1+2·ProbeGain) under the server's, and nothing lost.
func TestHeaderlessBucketOfOneBisects(t *testing.T) {
	gain := learn.DefaultTuning().ProbeGain
	for _, alg := range []string{"token-bucket", "leaky-bucket"} {
		for _, rate := range []int64{10, 20, 50} {
			c := cell{alg, rate, time.Second, 1, "none", time.Millisecond, 16, 300}
			for seed := uint64(1); seed <= 3; seed++ {
				o := runCell(t, c, seed)
				least := math.Floor(float64(rate) / (1 + 2*gain))
				got := float64(o.limit.Quota) / o.limit.Window.Seconds()
				if o.lost != 0 || got < least {
					t.Errorf("%s %d/s burst 1, no headers, seed %d: lost %d, learned %.3g/s; want 0 and at least %.0f/s",
						alg, rate, seed, o.lost, got, least)
					for _, e := range o.events {
						t.Log("   ", e)
					}
				}
			}
		}
	}
}

// paceAfter answers every request of l, reserved one after another from at, with resp until n
// were answered (5 or 15 ms after it left, in turn: a round trip whose deviation, 5 ms, makes a
// jitter margin of 20 ms), and returns the spacing the pace then keeps between two requests.
func paceAfter(t *testing.T, l *learn.Learner, at time.Time, n int, lines ...string) time.Duration {
	t.Helper()
	for i := range n {
		r, err := l.Reserve(at)
		if err != nil {
			t.Fatal(err)
		}
		at = at.Add(r.Delay(at))
		rtt := time.Duration(5+10*(i%2)) * time.Millisecond
		l.ObserveAttempt(at, at.Add(rtt), resp(200, lines...), nil)
		at = at.Add(rtt)
	}
	a, _ := l.Reserve(at)
	b, _ := l.Reserve(at)
	return b.Delay(at) - a.Delay(at)
}

// TestCushionedBucketPacesAtItsRate: a bucket whose answers said it held more than the jitter's
// reserve (5 of 10 left) absorbs the jitter with what it holds; its pace is its rate, without the
// margin a bucket of one needs (20 ms here).
func TestCushionedBucketPacesAtItsRate(t *testing.T) {
	l, _, ms := observedLearner(t)
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(10), resp(200, "RateLimit-Limit: 10", "RateLimit-Remaining: 5", "RateLimit-Reset: 1"), nil)
	spacing := paceAfter(t, l, ms(11), 10, "RateLimit-Limit: 10", "RateLimit-Remaining: 0", "RateLimit-Reset: 1")
	if spacing < 100*time.Millisecond || spacing > 101*time.Millisecond {
		t.Fatalf("a bucket that held 5 paced %v apart, want its spacing, 100 ms (and the headroom's 0.5 %%)", spacing)
	}
}

// TestShareStaysWhereSpareCanShow: a bucket whose answers said it held 9 of 10 can show spare, so
// a share halved when another client took the credit (a throttle saying it is spent, for a request
// sent with 7 left) climbs back only on spare quota. Answers that show none (the other client keeps
// it spent) leave it halved: the pace stays at half the rate, 200 ms.
func TestShareStaysWhereSpareCanShow(t *testing.T) {
	l, events, ms := observedLearner(t)
	limit := []string{"RateLimit-Limit: 10", "RateLimit-Reset: 1"}
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(10), resp(200, append(limit, "RateLimit-Remaining: 9")...), nil)
	send(t, l, ms(11))
	l.ObserveAttempt(ms(11), ms(21), resp(429, append(limit, "RateLimit-Remaining: 0")...), nil)
	halved := false
	for _, e := range *events {
		halved = halved || strings.Contains(e, "share -> 0.5")
	}
	if !halved {
		t.Fatalf("the throttle with credit left did not halve the share: the test tests nothing; events %q", *events)
	}
	spacing := paceAfter(t, l, ms(22), 100, append(limit, "RateLimit-Remaining: 0")...)
	if spacing < 195*time.Millisecond {
		t.Fatalf("after 100 answers showing no spare the pace is %v apart, want half the rate (200 ms)", spacing)
	}
}

// TestNewQuotaForgetsTheCushion: what a quota was seen to hold says nothing of the next one the
// server declares. 10 a second with 9 left, then 5 a second whose answers never say one left (a
// bucket of one): the new pace carries the jitter margin (200 ms and 20 ms here).
func TestNewQuotaForgetsTheCushion(t *testing.T) {
	l, _, ms := observedLearner(t)
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(10), resp(200, "RateLimit-Limit: 10", "RateLimit-Remaining: 9", "RateLimit-Reset: 1"), nil)
	spacing := paceAfter(t, l, ms(11), 20, "RateLimit-Limit: 5", "RateLimit-Remaining: 0", "RateLimit-Reset: 1")
	if spacing < 210*time.Millisecond {
		t.Fatalf("the new quota, a bucket of one, paced %v apart, want its spacing and the jitter margin (about 220 ms)", spacing)
	}
}
