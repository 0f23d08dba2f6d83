package learn_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// oldestExpiryLog is a sliding log of limit per w that names, as X-RateLimit-Reset, the instant its
// oldest entry leaves the window (when a place frees), in Unix seconds rounded up, against a Date
// header truncated to the second, as many Redis sorted-set limiters write it.
type oldestExpiryLog struct {
	limit int
	w     time.Duration
	log   []time.Time
}

func (s *oldestExpiryLog) answer(at time.Time) *http.Response {
	kept := s.log[:0]
	for _, e := range s.log {
		if at.Sub(e) < s.w {
			kept = append(kept, e)
		}
	}
	s.log = kept
	status := http.StatusOK
	if len(s.log) >= s.limit {
		status = http.StatusTooManyRequests
	} else {
		s.log = append(s.log, at)
	}
	end := s.log[0].Add(s.w)
	sec := end.Unix()
	if end.Nanosecond() > 0 {
		sec++
	}
	return resp(status,
		"Date: "+at.UTC().Format(http.TimeFormat),
		fmt.Sprintf("X-RateLimit-Limit: %d", s.limit),
		fmt.Sprintf("X-RateLimit-Remaining: %d", s.limit-len(s.log)),
		fmt.Sprintf("X-RateLimit-Reset: %d", sec))
}

// TestASlidingLogsNextExpiryIsNoCounter: a lone client on a sliding log, learned whole, sends one request,
// then, a little less than a window later, the rest of the quota. At the reset awaited (the first
// request's expiry) one place frees: the request that takes it is admitted with nothing left, and
// the log names its next expiry, the burst's, a little less than a window after the first. That is
// no counter's window end: the quota comes back whole a moment later.
func TestASlidingLogsNextExpiryIsNoCounter(t *testing.T) {
	const limit = 5
	w := time.Minute
	l, events, _ := observedLearner(t)
	srv := &oldestExpiryLog{limit: limit, w: w}
	at := time.Unix(1_700_000_000, 0).Add(-500 * time.Microsecond) // the first entry at a whole second
	do := func(wait bool) *http.Response {
		t.Helper()
		if d := waitFor(t, l, at); d > 0 {
			if !wait {
				t.Fatalf("request at %v held %v", at, d)
			}
			at = at.Add(d)
			send(t, l, at)
		}
		r := srv.answer(at.Add(500 * time.Microsecond))
		l.ObserveAttempt(at, at.Add(time.Millisecond), r, nil)
		t.Logf("%v: %d left %s reset %s -> %v", at.Format("15:04:05.000"), r.StatusCode, r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset"), l.LearnedLimit().Kind)
		at = at.Add(time.Millisecond)
		return r
	}
	for range limit {
		do(false)
	}
	do(true) // at the pace: refused, the log full: whole
	if got := l.LearnedLimit(); got.Kind != learn.KindWhole {
		t.Fatalf("learned %+v, want whole", got)
	}
	at = at.Add(w + 2*time.Second) // idle: the log empties
	do(true)
	at = at.Add(w - 500*time.Millisecond) // the rest, a little less than a window on
	for range limit - 1 {
		do(true)
	}
	do(true) // held until the first's expiry: a place frees, and the next expiry is the burst's
	if got := l.LearnedLimit(); got.Kind == learn.KindCounter {
		t.Errorf("a lone client's sliding log learned as %+v (events %q)", got, *events)
	}
	do(true) // the next, before the burst's expiry: refused, naming it again
	if got := l.LearnedLimit(); got.Kind == learn.KindCounter {
		t.Errorf("a lone client's sliding log, refused at its edge, learned as %+v (events %q)", got, *events)
	}
}
