package learn_test

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// sharedOutcome is what runShared measures: each client's admitted requests when the first
// client finished its last one (while both were sending), and the server's attempts and refusals.
type sharedOutcome struct {
	admittedWhileBoth []int64
	attempts, denied  int64
	lost              int64
}

// smallestShare is the smallest client's admitted requests while all were sending, over the fair
// share of them (1: even; 0: one client was locked out).
func (o sharedOutcome) smallestShare() float64 {
	var sum, least int64 = 0, -1
	for _, a := range o.admittedWhileBoth {
		sum += a
		if least < 0 || a < least {
			least = a
		}
	}
	if sum == 0 {
		return 0
	}
	return float64(least) / (float64(sum) / float64(len(o.admittedWhileBoth)))
}

// countingServer admits through the shared simulator and counts one client's admitted requests.
type countingServer struct {
	srv      *simServer
	admitted atomic.Int64
}

func (c *countingServer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.srv.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusOK {
		c.admitted.Add(1)
	}
	return resp, err
}

// runShared runs clients independent stacks (each its own learner, as processes that do not talk
// to each other), each sending c.n requests with c.workers workers, against one simulated server
// in virtual time, with the batch runner's retry settings.
func runShared(t *testing.T, c cell, clients int, seed uint64) sharedOutcome {
	var out sharedOutcome
	synctest.Test(t, func(t *testing.T) {
		alg, err := algorithm.New(c.alg, algorithm.Config{Limit: c.limit, Window: c.window, Burst: c.burst})
		if err != nil {
			t.Fatal(err)
		}
		srv := &simServer{alg: alg, headers: c.headers, capacity: c.burst, rtt: c.rtt, jitter: c.rtt / 10,
			rng: rand.New(rand.NewPCG(seed, 7)), start: time.Now()}
		counters := make([]*countingServer, clients)
		var firstDone sync.Once
		out.admittedWhileBoth = make([]int64, clients)
		var lost atomic.Int64
		var wg sync.WaitGroup
		for i := range clients {
			counters[i] = &countingServer{srv: srv}
			tr := client.NewTransport(counters[i], client.WithMaxWait(0), simRetry())
			var next, done atomic.Int64
			for range c.workers {
				wg.Go(func() {
					for next.Add(1) <= int64(c.n) {
						if !sendSim(tr) {
							lost.Add(1)
						}
						if done.Add(1) == int64(c.n) {
							firstDone.Do(func() {
								for j, cs := range counters {
									out.admittedWhileBoth[j] = cs.admitted.Load()
								}
							})
						}
					}
				})
			}
		}
		wg.Wait()
		srv.mu.Lock()
		out.attempts, out.denied = srv.admitted+srv.denied, srv.denied
		srv.mu.Unlock()
		out.lost = lost.Load()
	})
	return out
}

// TestTwoClientsShareABucket runs two independent clients (two processes on one API key) against
// one token or leaky bucket of a burst of a second's worth that says its level honestly, at 5 and
// 20 a second, behind 1 and 50 ms, 16 workers each, 300 requests each, three seeds. A client that
// spends a refilling quota to its last request leaves nothing for another to find: the other's
// every attempt met an empty bucket, was refused, and halved its share, while the first, refused
// nothing, never learned the other was there (5/s behind 1 ms: the smaller client got 0.01 of its
// fair share while both sent, and 42% of attempts drew a 429). Each client keeps one request of
// such a bucket back (declaredStrategy.plan), which another client takes, and then both see the
// quota contested. Asserted: nothing is lost, and no client is locked out: each gets at least a
// tenth of its fair share while both send (before, 0.01-0.02 on three of twelve runs; after,
// 0.27-0.97, the worst where the first client was refused nothing for 12 s and the second halved
// at each of its attempts meanwhile). The goals (within 20% of the fair share, at most 0.5%
// of attempts refused) are logged, not asserted: two clients that cannot see each other collide
// as they halve and regrow, and these cells miss them (docs/learner-measurements.md).
func TestTwoClientsShareABucket(t *testing.T) {
	for _, alg := range []string{"token-bucket", "leaky-bucket"} {
		for _, rate := range []int64{5, 20} {
			for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond} {
				c := cell{alg, rate, time.Second, rate, "honest", rtt, 16, 300}
				for seed := uint64(1); seed <= 3; seed++ {
					o := runShared(t, c, 2, seed)
					share := o.smallestShare()
					refused := float64(o.denied) / float64(max(o.attempts, 1))
					t.Logf("%s %d/s rtt=%v seed %d: smallest share %.2f of fair, %.2f%% refused, lost %d",
						alg, rate, rtt, seed, share, 100*refused, o.lost)
					if o.lost != 0 {
						t.Errorf("%s %d/s rtt=%v seed %d: lost %d", alg, rate, rtt, seed, o.lost)
					}
					if share < 0.1 {
						t.Errorf("%s %d/s rtt=%v seed %d: the smaller client got %.2f of its fair share while both sent (locked out)",
							alg, rate, rtt, seed, share)
					}
				}
			}
		}
	}
}
