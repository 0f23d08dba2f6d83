package learn_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// resp builds a response with literal header lines ("Name: value"), written by hand as servers
// send them, not by any writer of ours.
func resp(status int, lines ...string) *http.Response {
	h := http.Header{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ": ")
		h.Add(k, v)
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody}
}

// send reserves one request at at and requires it to be due at once.
func send(t *testing.T, l *learn.Learner, at time.Time) {
	t.Helper()
	r, err := l.Reserve(at)
	if err != nil || r.Delay(at) != 0 {
		t.Fatalf("request at %v not due at once (err %v)", at, err)
	}
}

// observedLearner returns a Learner whose events' details are collected, and a clock of
// milliseconds from a fixed instant.
func observedLearner(t *testing.T) (*learn.Learner, *[]string, func(int) time.Time) {
	t.Helper()
	events := new([]string)
	l, err := learn.New(learn.WithObserver(func(e learn.Event) { *events = append(*events, e.Detail) }))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	return l, events, func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
}

func TestLyingHeadersAreDistrusted(t *testing.T) {
	l, events, ms := observedLearner(t)
	claim := []string{`RateLimit-Policy: "default";q=1000;w=1`, `RateLimit: "default";r=900;t=1`}
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(1), resp(200, claim...), nil)
	if got := l.LearnedLimit(); got.Source != "declared" || got.Quota != 1000 {
		t.Fatalf("after one honest-looking answer: %+v, want the declared 1000/s believed", got)
	}
	// The headers say 900 remain, and the server throttles anyway: twice is a server that
	// over-claims.
	send(t, l, ms(2))
	send(t, l, ms(2))
	l.ObserveAttempt(ms(2), ms(3), resp(429, claim...), nil)
	l.ObserveAttempt(ms(2), ms(3), resp(429, claim...), nil)
	if got := l.LearnedLimit(); got.Source == "declared" {
		t.Fatalf("after two throttles with 900 said to remain: %+v, want the headers distrusted", got)
	}
	if !strings.Contains(strings.Join(*events, "\n"), "distrusted") {
		t.Fatalf("no event says the headers were distrusted: %q", *events)
	}
	// What the learner paces at now comes from the throttles, far below the claim.
	if r := l.Rate(); r <= 0 || r >= 1000 {
		t.Fatalf("pace after distrust %v/s, want a positive rate below the claimed 1000/s", r)
	}
}

func TestDeclaredLimitBelowTheServersIsRespected(t *testing.T) {
	l, err := learn.New()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	send(t, l, t0)
	// GitHub-style: a limit without a window, per the reset (an hour), nothing left.
	l.ObserveAttempt(t0, t0.Add(time.Millisecond), resp(200,
		"X-Ratelimit-Limit: 60", "X-Ratelimit-Remaining: 0", "X-Ratelimit-Reset: 3600"), nil)
	got := l.LearnedLimit()
	if got.Quota != 60 || got.Window != time.Hour {
		t.Fatalf("learned %+v, want 60 per hour", got)
	}
	if r := l.Rate(); r > 60.0/3600 {
		t.Fatalf("pace %v/s, above the declared 60/h", r)
	}
	r, _ := l.Reserve(t0.Add(2 * time.Millisecond))
	if d := r.Delay(t0.Add(2 * time.Millisecond)); d < 50*time.Second {
		t.Fatalf("next request waits %v with nothing left of 60/h, want at least the spacing of 60/h", d)
	}
}

func TestLowRateWithoutHeadersNoRetryStorm(t *testing.T) {
	l, err := learn.New()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(1), resp(200), nil) // a 1/s server's burst of one
	send(t, l, ms(1))
	send(t, l, ms(1)) // the slow start lets two go
	l.ObserveAttempt(ms(1), ms(2), resp(429), nil)
	l.ObserveAttempt(ms(1), ms(2), resp(429), nil)
	// One success before the throttles: the next requests go at most one a second.
	var last time.Duration
	for i := range 3 {
		r, _ := l.Reserve(ms(3))
		last = r.Delay(ms(3))
		if want := time.Duration(i+1) * 900 * time.Millisecond; last < want {
			t.Fatalf("request %d after the throttle waits %v, want at least %v (a pace of at most one per second)", i+1, last, want)
		}
	}
}

// TestFirstThrottleAtTheFirstInstantPaces: a 429 to the very first request (sent at the learner's
// first instant) starts the headerless law: the key is paced from then on, not left unpaced.
func TestFirstThrottleAtTheFirstInstantPaces(t *testing.T) {
	l, err := learn.New()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	send(t, l, t0)
	l.ObserveAttempt(t0, t0, resp(http.StatusTooManyRequests), nil)
	if l.Rate() <= 0 {
		t.Fatalf("a 429 to the first request left the key unpaced (rate %v)", l.Rate())
	}
	if got := l.LearnedLimit().Strategy; got != "rate" {
		t.Fatalf("strategy in charge %q, want rate", got)
	}
}

// TestShortRunAfterDistrustIsNoQuota: a server admitted a run of 195 while its (lying) headers
// were believed; after they are distrusted, a run of 6 cut short by the headerless pace, then a
// wall, is no quota that comes back whole: the cycles must not take 6 as one (against a fixed
// window of 200 a second, cycling 6 per period took 25-49x the physical limit in the sweep).
func TestShortRunAfterDistrustIsNoQuota(t *testing.T) {
	l, events, ms := observedLearner(t)
	claim := []string{`RateLimit-Policy: "default";q=2000;w=1`, `RateLimit: "default";r=1900;t=1`}
	for i := range 195 {
		l.ObserveAttempt(ms(i/20), ms(i/20+1), resp(200, claim...), nil)
	}
	l.ObserveAttempt(ms(10), ms(11), resp(429, claim...), nil)
	l.ObserveAttempt(ms(10), ms(11), resp(429, claim...), nil)
	if got := l.LearnedLimit(); got.Source == "declared" {
		t.Fatalf("after two throttles with 1,900 said to remain: %+v, want the headers distrusted", got)
	}
	// The headerless pace lets a run of 6 through, then the window is gone: a wall of throttles
	// over most of a second, then a success.
	at := 300
	for range 6 {
		l.ObserveAttempt(ms(at), ms(at+1), resp(200, claim...), nil)
		at += 5
	}
	for range 4 {
		l.ObserveAttempt(ms(at), ms(at+1), resp(429, claim...), nil)
		at += 200
	}
	l.ObserveAttempt(ms(at), ms(at+1), resp(200, claim...), nil)
	for _, e := range *events {
		if strings.Contains(e, "testing whether") {
			t.Fatalf("the cycles tested a run of 6 as the quota after a run of 195: %q", *events)
		}
	}
}

// TestExactResetIsTheWindow: Discord's X-RateLimit-Reset-After is exact (seconds with
// milliseconds), and a limit without a window is per the longest reset seen. A sliding log that
// answers the request that filled it says a reset of exactly its window, and that is the window,
// not the next whole second up (read as 50 per 2 s, the learner paced at half the rate: 1.9x).
func TestExactResetIsTheWindow(t *testing.T) {
	l, err := learn.New()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	l.ObserveAttempt(t0, t0.Add(time.Millisecond), resp(200,
		"X-RateLimit-Limit: 50", "X-RateLimit-Remaining: 49", "X-RateLimit-Reset: 1700000001.001",
		"X-RateLimit-Reset-After: 1.000", "X-RateLimit-Bucket: abcd1234"), nil)
	if got := l.LearnedLimit(); got.Quota != 50 || got.Window != time.Second {
		t.Fatalf("learned %+v, want 50 per 1s", got)
	}
}

// TestThrottleAfterHeldTestIsNoWall: a throttle right after a bisection's test held (the pace
// turning to cruise) comes after the server admitted the whole test: it is a throttle at the
// estimate, not a wall with nothing admitted since the last cut, and must not halve the pace
// (against nginx's limit_req at 50/s the halving held the pace at 25/s for eight seconds: 1.7x).
// And a refuted probe leaves the estimate it probed from as it was.
func TestThrottleAfterHeldTestIsNoWall(t *testing.T) {
	l, events, ms := observedLearner(t)
	at := 0
	answer := func(status int) {
		l.ObserveAttempt(ms(at), ms(at+1), resp(status), nil)
		at += 20 // 50 a second, the server's rate
	}
	reached := func(what string) {
		t.Helper()
		if !strings.Contains(strings.Join(*events, "\n"), what) {
			t.Fatalf("the learner did not reach %q; events:\n%s", what, strings.Join(*events, "\n"))
		}
	}
	answer(200) // a burst of one
	answer(429) // first throttle: search from 1/s, doubling every success
	for range 6 {
		answer(200)
	}
	answer(429) // refuted at 64/s: bisect [32, 64)
	reached("bisect: test")
	for !strings.Contains(strings.Join(*events, "\n"), "-> cruise") && at < 60_000 {
		if strings.Contains((*events)[len(*events)-1], "test 53.8") {
			answer(429) // 53.8/s refuted: the bracket is [45.3, 53.8)
		}
		answer(200)
	}
	reached("held 49.4/s (refuted 53.8/s) -> cruise")
	before := l.Rate()
	answer(429)
	if got := strings.Join(*events, "\n"); strings.Contains(got, "wall") {
		t.Fatalf("a throttle right after a held test was taken for a wall:\n%s", got)
	}
	if after := l.Rate(); after < 0.8*before {
		t.Fatalf("the pace fell from %.3g/s to %.3g/s: more than a cut below what the server admitted", before, after)
	}
	// The sender falls behind while the pace recovers after each cut (answers 40 ms apart: 25/s)
	// and keeps up while it cruises (20 ms: 50/s); the cruise turns to a probe, and the probe is
	// refused. The estimate it probed from held a whole quiet cruise: it stands, and the rate
	// admitted over the epochs, the dips after the cuts averaged in, does not pull it down.
	until := func(what string, spacing int) {
		t.Helper()
		for !strings.Contains((*events)[len(*events)-1], what) && at < 120_000 {
			l.ObserveAttempt(ms(at), ms(at+1), resp(200), nil)
			at += spacing
		}
		reached(what)
	}
	until("recover -> cruise", 40)
	for range 10 {
		answer(200)
	}
	answer(429) // a second epoch: the long run now spans two
	until("recover -> cruise", 40)
	until("-> probe", 20)
	held := l.LearnedLimit().Quota
	answer(429)
	reached("probe: throttled")
	if got := l.LearnedLimit().Quota; got != held {
		t.Fatalf("a refuted probe moved the estimate from %d/s to %d/s, want it to stand; events:\n%s", held, got, strings.Join(*events, "\n"))
	}
}

// TestContradictionsStandUntilAQuotaIsAdmitted: two throttles with quota said to remain, with a
// whole declared quota admitted between them (races with other clients on the key), leave honest
// headers believed; two with less admitted between them distrust the headers, however far apart in
// time (a lying server's Retry-After of 2 s spaces its throttles wider than its claimed window).
func TestContradictionsStandUntilAQuotaIsAdmitted(t *testing.T) {
	for _, c := range []struct {
		between  int // successes between the two contradictions, 2.1 s apart each
		believed bool
	}{
		{60, true},  // more than the 50 claimed: the headers held
		{20, false}, // less: the server never admitted what it claims
	} {
		l, _, ms := observedLearner(t)
		claim := []string{`RateLimit-Policy: "default";q=50;w=1`, `RateLimit: "default";r=40;t=1`, "Retry-After: 2"}
		at := 0
		answer := func(status int) {
			send(t, l, ms(at))
			l.ObserveAttempt(ms(at), ms(at+1), resp(status, claim...), nil)
		}
		answer(200)
		at = 2
		answer(429)
		for range c.between {
			at += 2100 // past the pause
			answer(200)
		}
		at += 2100
		answer(429)
		if got := l.LearnedLimit(); (got.Source == "declared") != c.believed {
			t.Errorf("%d successes between two contradictions: %+v, want the headers believed: %v", c.between, got, c.believed)
		}
	}
}

// TestContinuousQuotaCapacityFromResets: OpenAI states its limits per minute and documents that
// it may enforce them over shorter periods. An answer that leaves 4 of "300 a minute" and says the
// quota is whole again in 200 ms shows a capacity of 5 (4 plus a fifth of a second at 5/s): the
// quota is 5 a second, at the same rate. An answer whose reset is consistent with the minute
// ("9999 of 10000, whole in 6 ms", as OpenAI's own docs show it) leaves the minute's quota.
func TestContinuousQuotaCapacityFromResets(t *testing.T) {
	for _, c := range []struct {
		lines        []string
		quota        int64
		window       time.Duration
		capacityNote bool
	}{
		{[]string{"X-Ratelimit-Limit-Requests: 300", "X-Ratelimit-Remaining-Requests: 4", "X-Ratelimit-Reset-Requests: 200ms"}, 5, time.Second, true},
		{[]string{"X-Ratelimit-Limit-Requests: 10000", "X-Ratelimit-Remaining-Requests: 9999", "X-Ratelimit-Reset-Requests: 6ms"}, 10000, time.Minute, false},
	} {
		l, events, ms := observedLearner(t)
		// An earlier quota, with a larger capacity, is not this one's: it is measured afresh.
		send(t, l, ms(0))
		l.ObserveAttempt(ms(0), ms(1), resp(200, "X-Ratelimit-Limit-Requests: 30000", "X-Ratelimit-Remaining-Requests: 400", "X-Ratelimit-Reset-Requests: 200ms"), nil)
		before := len(*events)
		send(t, l, ms(2))
		l.ObserveAttempt(ms(2), ms(3), resp(200, c.lines...), nil)
		got := l.LearnedLimit()
		if got.Quota != c.quota || got.Window != c.window {
			t.Errorf("%q: learned %d per %v, want %d per %v", c.lines, got.Quota, got.Window, c.quota, c.window)
		}
		if note := strings.Contains(strings.Join((*events)[before:], "\n"), "capacity"); note != c.capacityNote {
			t.Errorf("%q: events %q, want a capacity note: %v", c.lines, (*events)[before:], c.capacityNote)
		}
	}
}

// TestLateSendSpacesTheNextAgainstABurstOfOne: a server that admitted one request and refused the
// next sent with it tolerates no bunching; the request behind one that went 300 ms late goes a
// whole spacing after it, not on its own schedule.
func TestLateSendSpacesTheNextAgainstABurstOfOne(t *testing.T) {
	l, _, ms := observedLearner(t)
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(1), resp(200), nil)
	send(t, l, ms(1))
	send(t, l, ms(1))
	l.ObserveAttempt(ms(1), ms(2), resp(429), nil) // burst of one: search from 1/s
	l.ObserveAttempt(ms(1), ms(2), resp(429), nil)
	a, _ := l.Reserve(ms(3))
	b, _ := l.Reserve(ms(3))
	due := ms(3).Add(a.Delay(ms(3)))
	gap := b.Delay(ms(3)) - a.Delay(ms(3)) // the spacing
	went := due.Add(300 * time.Millisecond)
	l.ObserveLateness(went, 300*time.Millisecond)
	if got := b.Delay(went); got < gap-time.Millisecond {
		t.Fatalf("the request behind one that went 300 ms late is due %v after it, want a spacing (%v)", got, gap)
	}
}

// TestWholeSecondResetIsNoCounterEvidence: Anthropic writes its reset as an instant in whole
// seconds, read against a Date header in whole seconds: up to two seconds late. Against a capacity
// of 5 at 5/s (a window of one second, narrower than the minute said) a reset two seconds away is
// no evidence of a sliding window counter.
func TestWholeSecondResetIsNoCounterEvidence(t *testing.T) {
	l, events, ms := observedLearner(t)
	date := ms(0).UTC()
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(1), resp(200,
		"Date: "+date.Format(http.TimeFormat),
		"Anthropic-Ratelimit-Requests-Limit: 300",
		"Anthropic-Ratelimit-Requests-Remaining: 4",
		"Anthropic-Ratelimit-Requests-Reset: "+date.Add(2*time.Second).Format(time.RFC3339)), nil)
	got := l.LearnedLimit()
	if got.Quota != 5 || got.Window != time.Second {
		t.Fatalf("learned %d per %v, want the capacity of 5 per 1s", got.Quota, got.Window)
	}
	if got.Kind == learn.KindCounter {
		t.Fatalf("a whole-second reset two seconds away made the quota a counter; events %q", *events)
	}
}

// TestRetryAfterHoldIsBounded: WithMaxPause bounds the learner's hold on a Retry-After (a day asked,
// a minute held), Resume ends it, and a negative bound is refused.
func TestRetryAfterHoldIsBounded(t *testing.T) {
	if _, err := learn.New(learn.WithMaxPause(-time.Second)); !errors.Is(err, learn.ErrInvalidOption) {
		t.Fatalf("WithMaxPause(-1s): %v, want ErrInvalidOption", err)
	}
	for _, tc := range []struct {
		name string
		opts []learn.Option
		want time.Duration
	}{
		{"no bound", nil, 24 * time.Hour},
		{"a minute", []learn.Option{learn.WithMaxPause(time.Minute)}, time.Minute},
		{"none", []learn.Option{learn.WithMaxPause(0)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := learn.New(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Unix(1_700_000_000, 0)
			send(t, l, t0)
			l.ObserveAttempt(t0, t0, resp(429, "Retry-After: 86400"), nil)
			r, err := l.Reserve(t0)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Delay(t0); got < tc.want || got > tc.want+time.Second {
				t.Fatalf("held %v after a Retry-After of a day, want %v", got, tc.want)
			}
			r.Cancel(t0)
			l.Resume(t0)
			if r, _ := l.Reserve(t0); r.Delay(t0) > time.Second {
				t.Fatalf("held %v after Resume, want the pace's first spacing at most", r.Delay(t0))
			}
		})
	}
}

// TestSpentQuotaGoesAtItsReset: a quota the server says is spent and back at a reset sooner than
// one spacing of its declared rate comes back at that reset, not at the rate. A day's quota of
// 1,000 is a spacing of 86.4 s; with its reset 3 s away, the next request goes in 3 s (a new-user
// trial waited 86 s), and once its answer says the quota is back, the ones after it go at once.
func TestSpentQuotaGoesAtItsReset(t *testing.T) {
	l, events, ms := observedLearner(t)
	policy := `RateLimit-Policy: "daily";q=1000;w=86400`
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(10), resp(200, policy, `RateLimit: "daily";r=0;t=3`), nil)
	r, err := l.Reserve(ms(10))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Delay(ms(10)); got > 3100*time.Millisecond || got < 2900*time.Millisecond { // the reset is from the answer, plus the margins
		t.Fatalf("the next request waits %v, want the reset's 3 s (events: %q)", got, *events)
	}
	at := ms(10).Add(r.Delay(ms(10)))
	l.ObserveAttempt(at, at.Add(10*time.Millisecond), resp(200, policy, `RateLimit: "daily";r=999;t=86400`), nil)
	next := at.Add(20 * time.Millisecond)
	send(t, l, next)
	send(t, l, next)
}

// TestClampedResetIsNoWindow: a reset no parser can represent ("X-RateLimit-Reset:
// 999999999999999999999", read as the 24 h bound) says nothing of the window: a limit declared
// without one is not taken per 24 h (a new-user trial's client then refused every request for 14.5
// minutes, the spacing of 100 a day, while the server answered normally).
func TestClampedResetIsNoWindow(t *testing.T) {
	l, _, ms := observedLearner(t)
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(10), resp(200, "X-RateLimit-Limit: 100", "X-RateLimit-Remaining: 99",
		"X-RateLimit-Reset: 999999999999999999999"), nil)
	if got := l.LearnedLimit(); got.Window >= time.Hour {
		t.Fatalf("learned %d per %v from a reset at the parsers' bound", got.Quota, got.Window)
	}
}

// TestAnsweredRequestIsSeen: a request answered before the next one left was seen by the server,
// however close they went: a sequential client's credit is what the server says remains. (Counted
// as possibly unseen because it left within the jitter margin before, it held back the last of a
// GitHub quota of 3, and the next request was refused for an 86 s pace.)
func TestAnsweredRequestIsSeen(t *testing.T) {
	l, events, ms := observedLearner(t)
	date := ms(0).UTC().Format(http.TimeFormat)
	reset := strconv.FormatInt(ms(0).Unix()+257, 10)
	gh := func(left int) *http.Response {
		return resp(200, "Date: "+date, "X-GitHub-Request-Id: CE0C:1C5B:1A2B3C:1B2C3D:65F0A1B2", "X-RateLimit-Resource: core",
			"X-RateLimit-Limit: 3", "X-RateLimit-Remaining: "+strconv.Itoa(left), "X-RateLimit-Used: "+strconv.Itoa(3-left),
			"X-RateLimit-Reset: "+reset)
	}
	send(t, l, ms(0))
	l.ObserveAttempt(ms(0), ms(4), gh(2), nil)
	send(t, l, ms(5))
	l.ObserveAttempt(ms(5), ms(6), gh(1), nil)
	r, err := l.Reserve(ms(7))
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Delay(ms(7)); d != 0 {
		t.Fatalf("the last request of the quota waits %v, want it sent at once (events %q)", d, *events)
	}
}

// TestWithTuningRefusesOutOfRange: every field of a Tuning out of its documented range is a clear
// error (ErrInvalidOption naming the field), never a learner that divides by zero or never paces;
// the defaults are accepted.
func TestWithTuningRefusesOutOfRange(t *testing.T) {
	if _, err := learn.New(learn.WithTuning(learn.DefaultTuning())); err != nil {
		t.Fatalf("DefaultTuning: %v", err)
	}
	for name, set := range map[string]func(*learn.Tuning){
		"Headroom":         func(u *learn.Tuning) { u.Headroom = -0.1 },
		"JitterMargin":     func(u *learn.Tuning) { u.JitterMargin = -1 },
		"ThrottleBudget":   func(u *learn.Tuning) { u.ThrottleBudget = 0 },
		"DeclaredBudget":   func(u *learn.Tuning) { u.DeclaredBudget = 0 },
		"Backoff":          func(u *learn.Tuning) { u.Backoff = 1 },
		"ProbeGain":        func(u *learn.Tuning) { u.ProbeGain = 0.6 },
		"MeasureSuccesses": func(u *learn.Tuning) { u.MeasureSuccesses = 1 },
		"DistrustAfter":    func(u *learn.Tuning) { u.DistrustAfter = 0 },
		"WholeShare":       func(u *learn.Tuning) { u.WholeShare = 0 },
	} {
		tun := learn.DefaultTuning()
		set(&tun)
		_, err := learn.New(learn.WithTuning(tun))
		if !errors.Is(err, learn.ErrInvalidOption) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s out of range: %v, want ErrInvalidOption naming it", name, err)
		}
	}
}

// TestABareThrottleContradictsTheHeaders: a throttle that says nothing of the quota, for a request
// the believed headers left room for, counts against them. HAProxy refusing at 100/s with a bare
// 429 and `Retry-After: 1`, in front of a backend whose every answer declared 100,000,000 per
// second: the headers were believed through 320 throttles in 3,000 requests (10.7 % of attempts,
// 1.76x the least time), and the pace stayed the backend's. Distrusted after DistrustAfter such
// throttles, the headerless law learns the proxy's rate. A bare throttle for a request sent with
// nothing left is no contradiction (an API whose own refusals carry no count).
func TestABareThrottleContradictsTheHeaders(t *testing.T) {
	backend := []string{`RateLimit: "default";r=99999999;t=1`, `RateLimit-Policy: "default";q=100000000;w=1`,
		"X-RateLimit-Limit: 100000000", "X-RateLimit-Remaining: 99999999", "X-RateLimit-Reset: 1"}
	l, events, ms := observedLearner(t)
	bare := func() *http.Response { return resp(429, "Retry-After: 1", "Content-Type: text/plain") }
	throttles := everyFourthRefused(t, l, ms, 400, backend, bare, func() bool { return l.LearnedLimit().Source != "declared" })
	if got := l.LearnedLimit(); got.Source == "declared" || throttles > learn.DefaultTuning().DistrustAfter {
		t.Fatalf("after %d bare throttles: %+v (events %q)", throttles, got, *events)
	}

	// Refusals that are not bare leave the headers believed however many: a 503 (a throttle
	// status here), a units quota's refusal (GitHub's GraphQL points), a global limit's
	// (Discord's).
	for _, c := range []struct {
		name string
		resp func() *http.Response
	}{
		{"503", func() *http.Response { return resp(503, "Retry-After: 1") }},
		{"units quota", func() *http.Response {
			return resp(403, "X-GitHub-Request-Id: CE0C:1C5B:1A2B3C:1B2C3D:65F0A1B2", "X-RateLimit-Resource: graphql",
				"X-RateLimit-Limit: 5000", "X-RateLimit-Remaining: 0", "X-RateLimit-Used: 5000", "X-RateLimit-Reset: "+strconv.FormatInt(ms(0).Unix()+1, 10))
		}},
		{"global limit", func() *http.Response {
			return resp(429, "X-RateLimit-Global: true", "X-RateLimit-Scope: global", "Retry-After: 1")
		}},
	} {
		var events []string
		l, err := learn.New(learn.WithThrottleStatuses(429, 503), learn.WithObserver(func(e learn.Event) { events = append(events, e.Detail) }))
		if err != nil {
			t.Fatal(err)
		}
		everyFourthRefused(t, l, ms, 200, backend, c.resp, func() bool { return false })
		if got := l.LearnedLimit(); got.Source != "declared" {
			t.Errorf("%s: distrusted the headers: %+v (events %q)", c.name, got, events)
		}
	}

	// Nothing left said: the bare throttle is the quota's own, the headers stand.
	l, events, ms = observedLearner(t)
	policy := `RateLimit-Policy: "w";q=10;w=60`
	for i := range 3 {
		send(t, l, ms(i))
		l.ObserveAttempt(ms(i), ms(i+1), resp(200, policy, `RateLimit: "w";r=`+strconv.Itoa(2-i)+`;t=60`), nil)
	}
	for i := range 3 {
		at := ms(61_000 * (i + 1))
		r, err := l.Reserve(at)
		if err != nil {
			t.Fatal(err)
		}
		at = at.Add(r.Delay(at))
		l.ObserveAttempt(at, at.Add(time.Millisecond), resp(429, "Retry-After: 1"), nil)
	}
	if got := l.LearnedLimit(); got.Source != "declared" {
		t.Fatalf("bare throttles with nothing left distrusted the headers: %+v (events %q)", got, *events)
	}
}

// everyFourthRefused sends up to n requests as l lets them go (a request not due yet is cancelled
// and the clock moves to when it would be), each answered a millisecond after it left: every fourth
// by refused(), the others admitted with the header lines ok. It stops early once done reports
// true, and returns how many were refused.
func everyFourthRefused(t *testing.T, l *learn.Learner, ms func(int) time.Time, n int, ok []string, refused func() *http.Response, done func() bool) int {
	t.Helper()
	now, count := 0, 0
	for sent := 0; sent < n && (sent == 0 || !done()); {
		if d := waitFor(t, l, ms(now)); d > 0 {
			now += int(d.Milliseconds()) + 1
			continue
		}
		sent++
		if sent%4 == 0 {
			count++
			l.ObserveAttempt(ms(now), ms(now+1), refused(), nil)
		} else {
			l.ObserveAttempt(ms(now), ms(now+1), resp(200, ok...), nil)
		}
		now += 2
	}
	return count
}

// waitFor reserves one request at at: 0 when it is due then (and booked), else the reservation is
// cancelled and its wait returned.
func waitFor(t *testing.T, l *learn.Learner, at time.Time) time.Duration {
	t.Helper()
	r, err := l.Reserve(at)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Delay(at)
	if d > 0 {
		r.Cancel(at)
	}
	return d
}
