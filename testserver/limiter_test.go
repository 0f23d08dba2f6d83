package testserver

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// admitN decides n requests and returns how many were admitted.
func admitN(t *testing.T, l *Limiter, n int, method, target, addr string, headers ...string) int {
	t.Helper()
	ok := 0
	for range n {
		res, err := l.Decide(req(method, target, addr, headers...))
		require.NoError(t, err)
		if res.Allowed {
			ok++
		}
	}
	return ok
}

func TestMultiRuleAllOrNothing(t *testing.T) {
	clock := newFakeClock()
	l := mustLimiter([]Rule{
		{Name: "global", Key: KeyGlobal, Algorithm: "fixed-window", Limit: 10, Window: time.Hour},
		{Name: "per-ip", Key: KeyIP, Algorithm: "sliding-log", Limit: 3, Window: time.Hour},
		{Name: "writes", Methods: []string{"post"}, PathPrefix: "/v1/", Key: KeyIP, Limit: 1, Window: time.Hour},
	}, WithClock(clock.Now))
	defer l.Close()

	// Client A: 3 admitted by per-ip, the rest denied by per-ip without charging global.
	assert.Equal(t, 3, admitN(t, l, 8, "GET", "/x", "192.0.2.1:1"))
	// Client B: a write passes all three; the second write is denied by "writes" alone.
	res, err := l.Decide(req("POST", "/v1/a", "192.0.2.2:1"))
	require.NoError(t, err)
	require.True(t, res.Allowed)
	require.Len(t, res.Rules, 3)
	res, err = l.Decide(req("POST", "/v1/a", "192.0.2.2:1"))
	require.NoError(t, err)
	assert.False(t, res.Allowed)
	assert.Equal(t, []bool{true, true, false}, []bool{res.Rules[0].Allowed, res.Rules[1].Allowed, res.Rules[2].Allowed})
	assert.False(t, res.Rules[0].Committed)
	assert.Equal(t, int64(6), res.Rules[0].Remaining, "global counts 4 admitted so far: 6 left, the denied write not charged")
	assert.Equal(t, "writes", mustHeadline(t, res).Rule)
	// Global has 6 left: clients C..I get one each until it runs out, although per-ip would allow 3.
	admitted := 0
	for _, ip := range []string{"192.0.2.3", "192.0.2.4", "192.0.2.5", "192.0.2.6", "192.0.2.7", "192.0.2.8", "192.0.2.9"} {
		admitted += admitN(t, l, 1, "GET", "/", ip+":1")
	}
	assert.Equal(t, 6, admitted)
	st := l.Stats()
	assert.Equal(t, Counters{Allowed: 10, Denied: 1, Blocked: 6}, st.Rules["global"])
	assert.Equal(t, Counters{Allowed: 10, Denied: 5, Blocked: 2}, st.Rules["per-ip"])
	assert.Equal(t, Counters{Allowed: 1, Denied: 1}, st.Rules["writes"])
	assert.Equal(t, Counters{Allowed: 3, Denied: 5}, st.Keys["per-ip"]["ip:192.0.2.1"])
}

func mustHeadline(t *testing.T, res Result) RuleResult {
	t.Helper()
	rr, ok := res.headline()
	require.True(t, ok)
	return rr
}

func TestElastic(t *testing.T) {
	for _, alg := range []string{"token-bucket", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window"} {
		t.Run(alg, func(t *testing.T) {
			var load atomic.Int64
			clock := newFakeClock()
			l := mustLimiter([]Rule{{Name: "e", Algorithm: alg, Limit: 10, Window: time.Hour, Mode: ModeElastic, Ceiling: 15, Capacity: 4}},
				WithClock(clock.Now), WithInFlight(load.Load))
			defer l.Close()

			load.Store(4) // busy: no spare capacity, the base limit holds
			assert.Equal(t, 10, admitN(t, l, 20, "GET", "/", "1.1.1.1:1"))
			res, err := l.Decide(req("GET", "/", "1.1.1.1:1"))
			require.NoError(t, err)
			require.False(t, res.Allowed)
			baseRetry := res.RetryAfter

			load.Store(3) // spare capacity: up to the ceiling
			assert.Equal(t, 5, admitN(t, l, 20, "GET", "/", "1.1.1.1:1"))
			res, err = l.Decide(req("GET", "/", "1.1.1.1:1"))
			require.NoError(t, err)
			require.False(t, res.Allowed)
			assert.GreaterOrEqual(t, res.RetryAfter, baseRetry, "the advertised wait is the base limit's, capacity or not")
			st := l.Stats().Rules["e"]
			assert.Equal(t, int64(15), st.Allowed)
			assert.Equal(t, int64(5), st.Elastic)

			// Waiting the advertised time gets a request in even without spare capacity.
			load.Store(100)
			clock.Advance(res.RetryAfter)
			assert.Equal(t, 1, admitN(t, l, 1, "GET", "/", "1.1.1.1:1"))
		})
	}
}

func TestElasticInFlightDefault(t *testing.T) {
	// Without WithInFlight, the load is the limiter's own in-flight count.
	l := mustLimiter([]Rule{{Name: "e", Limit: 1, Window: time.Hour, Mode: ModeElastic, Ceiling: 2, Capacity: 1}})
	defer l.Close()
	assert.Equal(t, int64(0), l.InFlight())
	l.inFlight.Add(1) // as if a request were inside the middleware
	assert.Equal(t, 1, admitN(t, l, 3, "GET", "/", "1.1.1.1:1"))
	l.inFlight.Add(-1)
	assert.Equal(t, 1, admitN(t, l, 3, "GET", "/", "1.1.1.1:1"))
}

func TestSoftAndShadow(t *testing.T) {
	clock := newFakeClock()
	l := mustLimiter([]Rule{
		{Name: "soft", PathPrefix: "/soft", Limit: 100, Window: time.Minute, Mode: ModeSoft, SoftPercent: 10},
		{Name: "shadow", PathPrefix: "/shadow", Limit: 5, Window: time.Minute, Mode: ModeShadow},
	}, WithClock(clock.Now))
	defer l.Close()
	assert.Equal(t, 110, admitN(t, l, 150, "GET", "/soft", "1.1.1.1:1"), "the seeds' 100 per minute with 10%% exceed")
	res, err := l.Decide(req("GET", "/soft", "1.1.1.1:1"))
	require.NoError(t, err)
	assert.Equal(t, int64(100), res.Rules[0].Limit, "soft mode advertises the published limit")
	assert.Equal(t, int64(0), res.Rules[0].Remaining)

	assert.Equal(t, 20, admitN(t, l, 20, "GET", "/shadow", "1.1.1.1:1"))
	res, err = l.Decide(req("GET", "/shadow", "1.1.1.1:1"))
	require.NoError(t, err)
	assert.True(t, res.Allowed)
	assert.True(t, res.Shadowed)
	assert.Equal(t, Counters{Allowed: 5, Shadowed: 16}, l.Stats().Rules["shadow"])
}

func TestTiers(t *testing.T) {
	clock := newFakeClock()
	l := mustLimiter([]Rule{{
		Name: "users", Key: "user+route", Limit: 2, Window: time.Hour,
		Tiers: map[string]Tier{
			"user:241531":                  {Limit: 5},
			"user:7+route:GET /v1/special": {Limit: 4},
			"route:GET /v1/free":           {Limit: 3},
		},
	}}, WithClock(clock.Now))
	defer l.Close()
	tests := []struct {
		user, path string
		want       int
		tier       string
	}{
		{"1", "/v1/a", 2, ""},
		{"241531", "/v1/a", 5, "user:241531"},
		{"241531", "/v1/b", 5, "user:241531"},
		{"7", "/v1/special", 4, "user:7+route:GET /v1/special"},
		{"7", "/v1/other", 2, ""},
		{"8", "/v1/free", 3, "route:GET /v1/free"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, admitN(t, l, 10, "GET", tt.path, "1.1.1.1:1", "X-User-ID", tt.user), "user %s %s", tt.user, tt.path)
		res, err := l.Decide(req("GET", tt.path, "1.1.1.1:1", "X-User-ID", tt.user))
		require.NoError(t, err)
		assert.Equal(t, tt.tier, res.Rules[0].Tier)
		assert.Equal(t, int64(tt.want), res.Rules[0].Limit)
	}
}

func TestSetRules(t *testing.T) {
	clock := newFakeClock()
	base := Rule{Name: "api", Key: KeyIP, Algorithm: "fixed-window", Limit: 3, Window: time.Hour}
	l := mustLimiter([]Rule{base}, WithClock(clock.Now))
	defer l.Close()
	assert.Equal(t, 3, admitN(t, l, 5, "GET", "/", "1.1.1.1:1"))

	// Same identity, other mode: the state is kept, so the soft allowance is all that is left.
	soft := base
	soft.Mode, soft.SoftPercent = ModeSoft, 100
	require.NoError(t, l.SetRules([]Rule{soft}))
	assert.Equal(t, 3, admitN(t, l, 5, "GET", "/", "1.1.1.1:1"))

	// Invalid rules leave the current ones in place.
	bad := base
	bad.Limit = -1
	assert.ErrorIs(t, l.SetRules([]Rule{bad}), ErrInvalidRule)
	assert.Equal(t, ModeSoft, l.Rules()[0].Mode)

	// A new limit is a new identity: fresh state under it.
	bigger := base
	bigger.Limit = 10
	require.NoError(t, l.SetRules([]Rule{bigger}))
	assert.Equal(t, 10, admitN(t, l, 12, "GET", "/", "1.1.1.1:1"))

	// Back to the first identity: its state was kept in the store.
	require.NoError(t, l.SetRules([]Rule{base}))
	assert.Equal(t, 0, admitN(t, l, 1, "GET", "/", "1.1.1.1:1"))

	// Adding a tier for another key keeps everyone else's state.
	tiered := base
	tiered.Tiers = map[string]Tier{"ip:2.2.2.2": {Limit: 1}}
	require.NoError(t, l.SetRules([]Rule{tiered}))
	assert.Equal(t, 0, admitN(t, l, 1, "GET", "/", "1.1.1.1:1"))
	assert.Equal(t, 1, admitN(t, l, 3, "GET", "/", "2.2.2.2:1"))

	// Removing every rule admits everything.
	require.NoError(t, l.SetRules(nil))
	assert.Equal(t, 5, admitN(t, l, 5, "GET", "/", "1.1.1.1:1"))
}

func TestDecideContextAndClose(t *testing.T) {
	// Inside the bubble time.Now is virtual and stands still, so the slots are exact.
	synctest.Test(t, func(t *testing.T) {
		l := mustLimiter([]Rule{{Name: "s", Algorithm: "leaky-bucket", Limit: 10, Window: 10 * time.Second, Shape: true}})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := l.Decide(req("GET", "/", "1.1.1.1:1").WithContext(ctx))
		assert.ErrorIs(t, err, context.Canceled)

		// A shaped request whose deadline comes before its slot is denied and consumes nothing.
		for i := range 3 {
			res, err := l.Decide(req("GET", "/", "1.1.1.1:1"))
			require.NoError(t, err)
			require.True(t, res.Allowed)
			assert.Equal(t, time.Duration(i)*time.Second, res.Delay)
		}
		dctx, dcancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer dcancel()
		res, err := l.Decide(req("GET", "/", "1.1.1.1:1").WithContext(dctx))
		require.NoError(t, err)
		assert.False(t, res.Allowed, "slot 3s ahead, deadline 2.5s")
		assert.Equal(t, 500*time.Millisecond, res.RetryAfter)
		res, err = l.Decide(req("GET", "/", "1.1.1.1:1"))
		require.NoError(t, err)
		assert.True(t, res.Allowed)
		assert.Equal(t, 3*time.Second, res.Delay, "the denied request took no slot")

		require.NoError(t, l.Close())
		require.NoError(t, l.Close())
		_, err = l.Decide(req("GET", "/", "1.1.1.1:1"))
		assert.ErrorIs(t, err, ErrClosed)
	})
}

// TestCountDenied: a rule that counts denials (HAProxy's http_req_rate) carries a client's refused
// requests into the next window's weight, where the default rule forgets them.
func TestCountDenied(t *testing.T) {
	clock := newFakeClock()
	base := Rule{Name: "plain", PathPrefix: "/plain", Algorithm: "sliding-window", Limit: 10, Window: time.Second}
	counting := base
	counting.Name, counting.PathPrefix, counting.CountDenied = "counting", "/counting", true
	l := mustLimiter([]Rule{base, counting}, WithClock(clock.Now))
	defer l.Close()

	// 20 requests in the first window: both admit 10.
	assert.Equal(t, 10, admitN(t, l, 20, "GET", "/plain", "1.1.1.1:1"))
	assert.Equal(t, 10, admitN(t, l, 20, "GET", "/counting", "1.1.1.1:1"))
	// Halfway through the next window the previous one weighs half its count: the plain rule
	// counted 10 (weight 5, room for 5), the counting rule 20 (weight 10, no room).
	clock.Advance(1200 * time.Millisecond) // the fake clock starts 0.3 s into a window
	assert.Equal(t, 5, admitN(t, l, 5, "GET", "/plain", "1.1.1.1:1"))
	res, err := l.Decide(req("GET", "/counting", "1.1.1.1:1"))
	require.NoError(t, err)
	assert.False(t, res.Allowed)
	assert.True(t, res.Rules[0].Committed, "the denied request is counted")
	assert.Equal(t, int64(0), res.Rules[0].Remaining)
	// Its Retry-After counts the denial itself (one in the current window): a nanosecond earlier
	// a request is refused, and counted, and retried at that refusal's Retry-After it is admitted.
	clock.Advance(res.RetryAfter - 1)
	early, err := l.Decide(req("GET", "/counting", "1.1.1.1:1"))
	require.NoError(t, err)
	assert.False(t, early.Allowed)
	assert.Greater(t, early.RetryAfter, time.Nanosecond, "the early request's count pushed the retry later")
	clock.Advance(early.RetryAfter)
	res, err = l.Decide(req("GET", "/counting", "1.1.1.1:1"))
	require.NoError(t, err)
	assert.True(t, res.Allowed, "admitted at its Retry-After")
	assert.Equal(t, Counters{Allowed: 11, Denied: 12}, l.Stats().Rules["counting"])
}
