package learn_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/throttle"
	"github.com/steadyhttp/steady/throttle/learn"
)

// TestServerRateIsBeforeTheShare: a learner that halved its share of a declared quota for other
// clients paces at the share, and reports the server's declared rate as ServerRate, by which the
// throttle's max wait judges it. With the share halved ten times against 100 a minute (a client
// locked out by another), its pace is a request per ten minutes; a max wait of ten minutes judged
// by it refused every request in a batch's line (two clients sharing a key lost 252-349 requests
// of 1,000 in one sweep seed of twelve). Judged by the server's rate, the line is waited out.
func TestServerRateIsBeforeTheShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := learn.New()
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
		quota := func(left string) []string {
			return []string{"X-Ratelimit-Limit: 100", "X-Ratelimit-Remaining: " + left, "X-Ratelimit-Reset: 60"}
		}
		book := func(ms int) {
			if _, err := l.Reserve(at(ms)); err != nil { // booked as sent, whatever the pace
				t.Fatal(err)
			}
		}
		// The quota spent, then a request at the declared pace admitted: a bucket.
		book(0)
		l.ObserveAttempt(at(0), at(1), resp(200, quota("0")...), nil)
		book(1000)
		l.ObserveAttempt(at(1000), at(1001), resp(200, quota("0")...), nil)
		// Then every request refused at its pace with nothing left: another client spends the
		// quota (one that never lets this one in), and the share halves at each.
		declared := 100.0 / 60
		for i := 0; i < 100 && l.Rate() >= 1.0/600; i++ {
			ms := 2000 + 1000*i
			book(ms)
			l.ObserveAttempt(at(ms), at(ms+1), resp(429, quota("0")...), nil)
		}
		if got := l.ServerRate(); got < declared*0.99 || got > declared*1.01 {
			t.Fatalf("ServerRate %.4g/s, want the declared %.4g/s", got, declared)
		}
		if got := l.Rate(); got >= 1.0/600 {
			t.Fatalf("Rate %.4g/s after the refusals, want slower than one request per max wait (the test tests nothing)", got)
		}
		th, err := throttle.New(throttle.WithMaxWait(10*time.Minute),
			throttle.WithLimiter(func(string) (throttle.Limiter, error) { return l, nil }))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		for i := range 3 {
			if err := th.Wait(context.Background(), "api.example.com"); err != nil {
				t.Fatalf("wait %d: %v, want the share's line waited out", i, err)
			}
		}
	})
}

// TestServerRateOfAnAssumedRateIsThePace: where the rate is the dialect's assumption (Shopify's call
// limit says the level, and Shopify documents 2 a second), a share halved at the pace is how the
// learner follows a bucket that leaks slower than assumed: the server demands that pace, and
// ServerRate is the pace itself, by which the max wait judges it (a review of the first version
// found a bucket leaking one request per 5 s reported at 1.99/s, its 7.5 s pace waited out past a
// max wait of 5 s).
func TestServerRateOfAnAssumedRateIsThePace(t *testing.T) {
	l, events, ms := observedLearner(t)
	full := "X-Shopify-Shop-Api-Call-Limit: 40/40"
	book := func(at int) {
		if _, err := l.Reserve(ms(at)); err != nil {
			t.Fatal(err)
		}
	}
	book(0)
	l.ObserveAttempt(ms(0), ms(1), resp(200, full), nil)
	for i := 0; i < 20 && !strings.Contains(strings.Join(*events, "\n"), "share ->"); i++ {
		at := 1000 + 1000*i
		book(at)
		l.ObserveAttempt(ms(at), ms(at+1), resp(429, full, "Retry-After: 1.0"), nil)
	}
	if !strings.Contains(strings.Join(*events, "\n"), "share ->") {
		t.Fatalf("the share never halved: the test tests nothing; events %q", *events)
	}
	if rate, server := l.Rate(), l.ServerRate(); rate <= 0 || server != rate {
		t.Fatalf("Rate %.4g/s, ServerRate %.4g/s: want ServerRate the pace itself", rate, server)
	}
}
