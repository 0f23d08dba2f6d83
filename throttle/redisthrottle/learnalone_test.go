package redisthrottle

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/redistest"
)

// TestFallbackLearnsAlone: with Redis unreachable from the start, a learning limiter's successes
// (each standing for 1/share of the key's) and throttles teach the law it holds, as one
// learn.RateLaw fed the same evidence, and the local
// fallback paces at that law's rate times the process's share: it grows past the initial rate
// during the startup and comes down on a throttle (it used to keep the initial rate, and cut it
// by 30% per throttle, whatever the server answered).
func TestFallbackLearnsAlone(t *testing.T) {
	srv := redistest.Start(t)
	l := mustNew(t, newClient(t, srv.URL()), "alone", WithInitialRate(40), WithFallbackShare(0.5))
	srv.Stop()
	ref, err := newLaw(l.cfg)
	if err != nil {
		t.Fatal(err)
	}
	secondDelay := func(now time.Time) time.Duration {
		t.Helper()
		l.Reserve(now)
		r, _ := l.Reserve(now)
		return r.Delay(now)
	}
	if got := secondDelay(epoch); got != 50*time.Millisecond {
		t.Fatalf("second delay %v, want 50ms (the initial 40/s, half of it)", got)
	}
	const rtt = 10 * time.Millisecond
	for i := range 30 {
		sent := epoch.Add(time.Duration(i) * time.Millisecond)
		l.ObserveAttempt(sent, sent.Add(rtt), ok200, nil)
		ref.ObserveRoundTrip(sent, sent.Add(rtt))
		ref.Admit(sent.Add(rtt), 2) // with a share of 1/2, each success stands for two of the key's
	}
	if got := l.Rate(); !near(got, ref.Rate()) || got <= 40 {
		t.Fatalf("after 30 successes alone the pace is %v/s; the same evidence makes a RateLaw's %v/s, past the initial 40/s", got, ref.Rate())
	}
	sent := epoch.Add(40 * time.Millisecond)
	l.ObserveAttempt(sent, sent.Add(rtt), throttled429, nil)
	ref.ObserveRoundTrip(sent, sent.Add(rtt))
	if ref.Throttle(sent, sent.Add(rtt)) == "" {
		t.Fatal("the reference law did not cut")
	}
	if got := l.Rate(); !near(got, ref.Rate()) || !ref.Active() {
		t.Fatalf("after a throttle alone the pace is %v/s, a RateLaw's %v/s (%s)", got, ref.Rate(), ref.State())
	}
	if s := l.Stats(); s.Cuts != 1 || s.Throttles != 1 {
		t.Errorf("stats %+v, want one throttle that cut", s)
	}
	now := epoch.Add(2 * time.Second)
	want := time.Duration(math.Ceil(1e9 / (ref.Rate() * 0.5)))
	if got := secondDelay(now); got != want {
		t.Errorf("second delay after the cut %v, want %v (the law's rate, half of it)", got, want)
	}
}

// TestFallbackKeepsTheDeclaredCap: alone, the local fallback paces at the rate the server
// declares (less the headroom) while the law is in its startup, as Redis would.
func TestFallbackKeepsTheDeclaredCap(t *testing.T) {
	srv := redistest.Start(t)
	l := mustNew(t, newClient(t, srv.URL()), "alone-cap")
	srv.Stop()
	l.Reserve(epoch)
	declared := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Ratelimit-Policy": {`"default";q=10;w=1`}}}
	l.ObserveAttempt(epoch, epoch.Add(time.Millisecond), declared, nil)
	if got := l.Rate(); !near(got, 10*(1-DefaultHeadroom)) {
		t.Fatalf("pace %v/s with 10/s declared, want %v/s", got, 10*(1-DefaultHeadroom))
	}
}

// TestForgottenStateIsSeeded: when Redis forgets the shared state (a restart without persistence,
// a flush) while the processes run, the first process to notice writes the law it holds as the
// new state, instead of every process going back to the startup; Redis's count of successes is
// brought level with the law's, so the law goes on applying the successes reported after it.
func TestForgottenStateIsSeeded(t *testing.T) {
	c := newClient(t, redisURL(t))
	a := mustNew(t, c, "seed")
	const rtt = 10 * time.Millisecond
	for i := range 10 {
		attempt(t, a, time.Duration(i)*20*time.Millisecond, rtt, ok200)
	}
	attempt(t, a, 200*time.Millisecond, rtt, throttled429)
	before := storedLaw(t, a)
	if !before.Active() {
		t.Fatalf("the law before Redis forgot it: %s", before.State())
	}
	if err := c.Del(context.Background(), a.Key()).Err(); err != nil {
		t.Fatal(err)
	}
	attempt(t, a, 300*time.Millisecond, rtt, ok200) // a's next reservation finds the state gone
	seeded := storedLaw(t, a)
	if !seeded.Active() || !near(seeded.Rate(), before.Rate()) {
		t.Fatalf("the state after Redis forgot it: %s at %v/s, want the law a held, %s at %v/s",
			seeded.State(), seeded.Rate(), before.State(), before.Rate())
	}
	sc, err := strconv.ParseInt(hget(t, c, a, "sc"), 10, 64)
	if err != nil || sc != seeded.Successes() {
		t.Fatalf("Redis counts %d successes (%v), the seeded law %d: they must agree", sc, err, seeded.Successes())
	}
	// Another process reads the seeded law and applies the successes reported after it.
	b := mustNew(t, c, "seed")
	attempt(t, b, 400*time.Millisecond, rtt, ok200)
	attempt(t, b, 420*time.Millisecond, rtt, ok200)
	if _, err := b.Reserve(epoch.Add(440 * time.Millisecond)); err != nil { // reports the second
		t.Fatal(err)
	}
	if got := b.Rate(); !near(got, before.Rate()) {
		t.Errorf("another process paces at %v/s, want the seeded %v/s", got, before.Rate())
	}
	if got := b.law.Successes(); got != seeded.Successes()+2 {
		t.Errorf("the law as b holds it applied %d successes, want %d: the seed's and the two reported since", got, seeded.Successes()+2)
	}
}

// TestLawLearnedAloneDoesNotSeed: after an outage in which Redis lost the state, the process seeds
// it with the shared law it last read or wrote, not with what it learned alone meanwhile (one
// process's share of the traffic: its throttles cut a rate it never sent alone).
func TestLawLearnedAloneDoesNotSeed(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.URL())
	a := mustNew(t, c, "aloneseed", WithRecheck(time.Second))
	const rtt = 10 * time.Millisecond
	for i := range 10 {
		attempt(t, a, time.Duration(i)*20*time.Millisecond, rtt, ok200)
	}
	attempt(t, a, 200*time.Millisecond, rtt, throttled429)
	shared := storedLaw(t, a)
	srv.Stop() // Redis restarts without its data
	for i := range 3 {
		at := time.Duration(300+100*i) * time.Millisecond
		a.Reserve(epoch.Add(at))
		a.ObserveAttempt(epoch.Add(at), epoch.Add(at+rtt), throttled429, nil)
	}
	if got := a.Rate(); got >= shared.Rate() {
		t.Fatalf("alone, three throttles left the pace at %v/s, the shared law's %v/s: want cut", got, shared.Rate())
	}
	srv.Restart()
	attempt(t, a, 2*time.Second, rtt, ok200) // after the recheck period: Redis again, the state gone
	seeded := storedLaw(t, a)
	if seeded.State() != shared.State() || !near(seeded.Rate(), shared.Rate()) {
		t.Fatalf("seeded with %s at %v/s; want the shared law a last wrote, %s at %v/s", seeded.State(), seeded.Rate(), shared.State(), shared.Rate())
	}
}

// TestBackFromAnOutageWithTheStateKept: Redis stops answering for a while and comes back with the
// shared state intact (nobody wrote it meanwhile). The limiter reports the shared pace again, not
// the one it learned alone, and its first throttle is applied to the shared law read afresh, not
// written over it from the law learned alone (whose count of successes Redis never saw).
func TestBackFromAnOutageWithTheStateKept(t *testing.T) {
	url := redisURL(t)
	c := newClient(t, url)
	a := mustNew(t, c, "outage", WithTimeout(500*time.Millisecond), WithRecheck(time.Second))
	const rtt = 10 * time.Millisecond
	for i := range 5 {
		attempt(t, a, time.Duration(i)*20*time.Millisecond, rtt, ok200)
	}
	reserveAt(t, a, 100*time.Millisecond)
	pace := hget(t, c, a, "e")
	// Redis holds every command for a second: the next call times out (at 500 ms), and a learns
	// alone.
	admin := newClient(t, url)
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", 1000).Err(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	reserveAt(t, a, 200*time.Millisecond)
	if a.Stats().Fallback != 1 {
		t.Fatalf("stats %+v: want the reservation from the fallback", a.Stats())
	}
	for i := range 20 {
		at := 210*time.Millisecond + time.Duration(i)*time.Millisecond
		a.ObserveAttempt(epoch.Add(at), epoch.Add(at+rtt), ok200, nil)
	}
	alone := a.Rate()
	time.Sleep(time.Until(paused.Add(1100 * time.Millisecond))) // the pause is over
	// After the recheck period Redis answers; a's first call is the report of a throttle.
	a.ObserveAttempt(epoch.Add(2*time.Second), epoch.Add(2*time.Second+rtt), throttled429, nil)
	sc, err := strconv.ParseInt(hget(t, c, a, "sc"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if law := storedLaw(t, a); law.Successes() > sc {
		t.Fatalf("the law in Redis counts %d successes, Redis %d: the law learned alone was written over the shared one", law.Successes(), sc)
	}
	reserveAt(t, a, 2100*time.Millisecond)
	if got, want := a.Rate(), hget(t, c, a, "e"); strconv.FormatFloat(got, 'g', -1, 64) != want {
		t.Fatalf("back from the outage the limiter reports %v/s (alone: %v/s; before: %s/s); Redis books at %s/s", got, alone, pace, want)
	}
}
