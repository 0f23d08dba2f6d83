package learn_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/throttle/learn"
)

// xrlServer is testserver's x-ratelimit persona (persona_standard.go, writeXRateLimit): Date, the
// limit, what is left and the reset as unixCeil(now, ResetAfter), Retry-After ceil on a denial,
// over one of testserver's algorithms.
type xrlServer struct {
	alg algorithm.Algorithm
	st  algorithm.State
}

func (s *xrlServer) answer(now time.Time) *http.Response {
	d := s.alg.Decide(&s.st, now, 1)
	status := http.StatusOK
	if d.Allowed {
		s.alg.Commit(&s.st, now, 1)
	} else {
		status = http.StatusTooManyRequests
	}
	end := now.Add(d.ResetAfter)
	sec := end.Unix()
	if end.Nanosecond() > 0 {
		sec++
	}
	lines := []string{
		"Date: " + now.UTC().Format(http.TimeFormat),
		fmt.Sprintf("X-RateLimit-Limit: %d", d.Limit),
		fmt.Sprintf("X-RateLimit-Remaining: %d", d.Remaining),
		"X-RateLimit-Reset: " + strconv.FormatInt(sec, 10),
	}
	if !d.Allowed {
		lines = append(lines, fmt.Sprintf("Retry-After: %d", max(int64((d.RetryAfter+time.Second-1)/time.Second), 1)))
	}
	return resp(status, lines...)
}

// loneRun drives one lone client with one worker at the learner's pace against srv, each leg of
// the trip rtt/2 plus up to jitter (seeded), and returns the learned limit, the refusals and the
// events.
func loneRun(t *testing.T, srv *xrlServer, n int, rtt, jitter time.Duration, seed uint64) (learn.Limit, int, []string) {
	rng := rand.New(rand.NewPCG(seed, 9))
	leg := func() time.Duration {
		d := rtt / 2
		if jitter > 0 {
			d += time.Duration(rng.Int64N(int64(jitter)))
		}
		return d
	}
	l, events, _ := observedLearner(t)
	at := time.Unix(1_700_000_000, 123_000_000)
	refused := 0
	for range n {
		if d := waitFor(t, l, at); d > 0 {
			at = at.Add(d)
			send(t, l, at)
		}
		server := at.Add(leg())
		r := srv.answer(server)
		if r.StatusCode != http.StatusOK {
			refused++
		}
		back := server.Add(leg())
		l.ObserveAttempt(at, back, r, nil)
		at = back
	}
	return l.LearnedLimit(), refused, *events
}

// TestALoneBucketWithInstantsIsNoCounter: a lone client, one worker, on testserver's
// x-ratelimit persona over a token or leaky bucket (its reset: when the bucket is full again, a Unix
// time rounded up). A refusal at the pace is the network's jitter, not a window weighing the past.
func TestALoneBucketWithInstantsIsNoCounter(t *testing.T) {
	for _, name := range []string{algorithm.NameTokenBucket, algorithm.NameLeakyBucket} {
		for _, limit := range []int64{5, 10, 50} {
			for seed := uint64(1); seed <= 3; seed++ {
				alg, err := algorithm.New(name, algorithm.Config{Limit: limit, Window: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				got, refused, events := loneRun(t, &xrlServer{alg: alg}, 400, 50*time.Millisecond, 10*time.Millisecond, seed)
				var why string
				for _, e := range events {
					if strings.Contains(e, "-> counter") {
						why = e
					}
				}
				t.Logf("%s %d/s seed %d: %d refused of 400, learned %+v %s", name, limit, seed, refused, got, why)
				if got.Kind == learn.KindCounter {
					t.Errorf("%s %d/s seed %d: a lone client learned a counter: %s", name, limit, seed, why)
				}
			}
		}
	}
}

// scriptedRun drives one lone client with one worker at the learner's pace against srv for n
// requests from start, request i's trip out taking out(i) and its answer's in(i), and returns the
// learner and its events.
func scriptedRun(t *testing.T, srv *xrlServer, n int, start time.Time, out, in func(i int) time.Duration) (*learn.Learner, *[]string) {
	l, events, _ := observedLearner(t)
	at := start
	for i := range n {
		if d := waitFor(t, l, at); d > 0 {
			at = at.Add(d)
			send(t, l, at)
		}
		server := at.Add(out(i))
		r := srv.answer(server)
		back := server.Add(in(i))
		l.ObserveAttempt(at, back, r, nil)
		at = back
	}
	return l, events
}
