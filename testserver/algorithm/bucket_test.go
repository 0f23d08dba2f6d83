package algorithm

import (
	"fmt"
	"math"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestTokenBucketMatchesXTimeRate checks that the token bucket agrees with
// golang.org/x/time/rate's Limiter.AllowN on every decision of random traces, and that Remaining is
// the whole tokens it reports left.
//
// x/time/rate computes in float64, so the traces stay where its arithmetic is exact: times are
// multiples of 1/512 s (1953125 ns, so Duration.Seconds is an exact binary fraction) and rates are
// Limit per 1, 2, 4 or 8 seconds (dyadic rationals), which keeps every token count an exact binary
// fraction with a denominator of at most 4096. Any shortfall is then at least 1/4096 token, far more
// than the nanosecond its truncating duration conversion could round away, so AllowN admits iff
// the exact token count is at least n — the definition the token bucket implements exactly.
func TestTokenBucketMatchesXTimeRate(t *testing.T) {
	const grid = time.Second / 512
	rates := []struct {
		limit  int64
		window time.Duration
	}{{10, time.Second}, {5, 2 * time.Second}, {3, 4 * time.Second}, {1, 8 * time.Second}, {100, time.Second}, {7, time.Second}}
	decisions, admitted := 0, 0
	for trial := range 120 {
		r := seed("x/time/rate", trial)
		rt := rates[r.IntN(len(rates))]
		burst := 1 + r.Int64N(min(2*rt.limit+5, 100))
		a, err := NewTokenBucket(Config{Limit: rt.limit, Window: rt.window, Burst: burst})
		if err != nil {
			t.Fatal(err)
		}
		lim := rate.NewLimiter(rate.Limit(float64(rt.limit)/rt.window.Seconds()), int(burst))
		interval := int64(rt.window/grid) / rt.limit // grid steps per token
		var s State
		now := t0
		for i := range 500 {
			if r.IntN(3) != 0 {
				now = now.Add(grid * time.Duration(r.Int64N(2*interval+2)))
			}
			n := 1 + r.Int64N(min(burst+1, 8))
			if r.IntN(10) == 0 {
				n = burst + 1
			}
			got := a.Decide(&s, now, n)
			want := lim.AllowN(now, int(n))
			decisions++
			if got.Allowed != want {
				t.Fatalf("trial %d (%d per %v, burst %d) step %d n=%d: token bucket %v, x/time/rate %v",
					trial, rt.limit, rt.window, burst, i, n, got.Allowed, want)
			}
			if got.Allowed {
				admitted++
				a.Commit(&s, now, n)
			}
			if tokens := int64(math.Floor(lim.TokensAt(now))); got.Remaining != tokens {
				t.Fatalf("trial %d step %d: Remaining %d, x/time/rate has %d whole tokens", trial, i, got.Remaining, tokens)
			}
		}
	}
	t.Logf("%d decisions agree with x/time/rate (%d admitted)", decisions, admitted)
	if admitted < decisions/4 || admitted > decisions*3/4 {
		t.Fatalf("admitted %d of %d: the traces do not exercise both outcomes", admitted, decisions)
	}
}

// TestLeakyBucketFollowsSchedule checks the leaky bucket against the schedule model written
// literally from its definition (slot s = max(t, s_last + I), admitted iff s - t <= (Burst-1)*I):
// admission, remaining places, time until the queue is empty, and the slot delay.
func TestLeakyBucketFollowsSchedule(t *testing.T) {
	delayed := 0
	for trial := range 60 {
		r := seed("leaky schedule", trial)
		a := mustNew(NameLeakyBucket, randomConfig(r, NameLeakyBucket))
		p := paramsOf(a)
		ref := &refSchedule{}
		var s State
		for i, o := range randomTrace(r, a, t0ns+r.Int64N(1e12), 300, false) {
			n := max(o.n, 1)
			got := a.Decide(&s, ts(o.t), o.n)
			want := ref.decide(p, o.t, n)
			if got.Allowed != want.allowed || got.Remaining != want.remaining ||
				got.ResetAfter != want.reset || got.Delay != want.delay {
				t.Fatalf("trial %d %+v step %d (t=%d n=%d): got %+v, schedule model %+v", trial, p, i, o.t, n, got, want)
			}
			if got.Allowed {
				if got.Delay > 0 {
					delayed++
				}
				a.Commit(&s, ts(o.t), o.n)
				ref.commit(p, o.t, n)
			}
		}
	}
	if delayed < 500 {
		t.Fatalf("only %d admissions were queued; the traces do not exercise the queue", delayed)
	}
}

// TestLeakyBucketMetersLikeTokenBucket checks the classic equivalence the leaky bucket's doc states:
// with the same parameters it admits exactly what the token bucket admits, and reports the same
// numbers, on random traces with late callers; only Delay differs.
func TestLeakyBucketMetersLikeTokenBucket(t *testing.T) {
	for trial := range 60 {
		r := seed("leaky=token", trial)
		c := randomConfig(r, NameLeakyBucket)
		leaky, token := mustNew(NameLeakyBucket, c), mustNew(NameTokenBucket, c)
		var sl, st State
		for i, o := range randomTrace(r, leaky, t0ns, 300, true) {
			dl, dt := leaky.Decide(&sl, ts(o.t), o.n), token.Decide(&st, ts(o.t), o.n)
			if dt.Delay != 0 {
				t.Fatalf("token bucket reported a delay: %+v", dt)
			}
			dl.Delay = 0
			if dl != dt {
				t.Fatalf("trial %d %+v step %d: leaky %+v, token %+v", trial, c, i, dl, dt)
			}
			if dl.Allowed {
				leaky.Commit(&sl, ts(o.t), o.n)
				token.Commit(&st, ts(o.t), o.n)
			}
		}
	}
}

// TestLeakyBucketShapingDelays checks the delays a shaping server would hold requests for: a burst
// of Burst requests at one instant leaves one interval apart.
func TestLeakyBucketShapingDelays(t *testing.T) {
	for _, burst := range []int64{1, 2, 5, 50} {
		t.Run(fmt.Sprint(burst), func(t *testing.T) {
			a, err := NewLeakyBucket(Config{Limit: 50, Window: time.Hour, Burst: burst})
			if err != nil {
				t.Fatal(err)
			}
			var s State
			for i := range burst {
				d := a.Decide(&s, t0, 1)
				if want := time.Duration(i) * 72 * time.Second; !d.Allowed || d.Delay != want {
					t.Fatalf("request %d: %+v, want admitted with delay %v", i, d, want)
				}
				a.Commit(&s, t0, 1)
			}
			if d := a.Decide(&s, t0, 1); d.Allowed || d.RetryAfter != 72*time.Second {
				t.Fatalf("request %d: %+v, want denied for one interval (72s)", burst, d)
			}
		})
	}
}
