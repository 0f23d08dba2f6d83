package redisstore

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestRedisStopRestart stops a real redis-server under a store with one rule per policy, checks
// that every Apply is decided by its rule's policy (fail-open admits without counting, fail-closed
// denies until the retry, fallback decides locally with its share of the limit, and a fail-closed
// rule in a request blocks the others), and that after a restart the store is back on Redis (whose
// data the restart lost: a fresh quota).
func TestRedisStopRestart(t *testing.T) {
	srv := startRedis(t)
	const retry = time.Microsecond // every Apply may probe: recovery needs no waiting
	st := openStore(t, srv.URL(), WithRetryInterval(retry), WithFallbackShare(0.5),
		WithRulePolicy("open", FailOpen), WithRulePolicy("closed", FailClosed)) // "fallback": the default
	var hooked int
	st.cfg.onError = func(error) { hooked++ }
	ctx := context.Background()
	now := time.Now()
	tb := mustAlg(t, algorithm.NameTokenBucket, 4, time.Hour, 0)
	check := func(rule string) testserver.StoreCheck {
		return testserver.StoreCheck{Rule: rule, Scope: rule + "|tb|4|1h", Key: "k", N: 1, Algorithm: tb}
	}
	do := func(cs ...testserver.StoreCheck) []testserver.StoreDecision {
		t.Helper()
		ds, err := st.Apply(ctx, now, cs)
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		return ds
	}

	// Up: Redis decides.
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping with Redis up: %v", err)
	}
	if d := do(check("fallback"))[0]; !d.Decision.Allowed || d.Decision.Remaining != 3 || !d.Committed {
		t.Fatalf("with Redis up: %+v", d)
	}
	srv.Stop()
	if err := st.Ping(ctx); err == nil {
		t.Fatal("Ping with Redis down: no error")
	}

	type want struct {
		allowed, committed bool
		remaining          int64
		retryAfter         time.Duration
	}
	steps := []struct {
		name   string
		checks []testserver.StoreCheck
		want   []want
	}{
		{"fail-open admits", []testserver.StoreCheck{check("open")}, []want{{true, false, 0, 0}}},
		{"fail-open admits again", []testserver.StoreCheck{check("open")}, []want{{true, false, 0, 0}}},
		{"fail-closed denies", []testserver.StoreCheck{check("closed")}, []want{{false, false, 0, retry}}},
		// Fallback: 4 per hour at share 0.5 is 2 per hour locally.
		{"fallback 1st", []testserver.StoreCheck{check("fallback")}, []want{{true, true, 1, 0}}},
		// Blocked: the open check is reported admitted but not counted as a fail-open admission.
		{"fail-closed blocks the others", []testserver.StoreCheck{check("fallback"), check("closed"), check("open")},
			[]want{{true, false, 0, 0}, {false, false, 0, retry}, {true, false, 0, 0}}},
		{"fallback 2nd", []testserver.StoreCheck{check("fallback"), check("open")}, []want{{true, true, 0, 0}, {true, false, 0, 0}}},
		{"fallback denies the 3rd", []testserver.StoreCheck{check("fallback")}, []want{{false, false, 0, 30 * time.Minute}}},
	}
	for _, s := range steps {
		ds := do(s.checks...)
		for i, w := range s.want {
			d := ds[i]
			if d.Decision.Allowed != w.allowed || d.Committed != w.committed || d.Decision.Remaining != w.remaining || d.Decision.RetryAfter != w.retryAfter {
				t.Fatalf("%s: check %d (%s) = %+v committed=%t, want %+v", s.name, i, s.checks[i].Rule, d.Decision, d.Committed, w)
			}
		}
	}
	c := st.Counters()
	if c.Decided != 1 || c.Errors+c.Skipped != int64(len(steps)) || c.Errors < 1 || c.Timeouts != 0 || int64(hooked) != c.Errors ||
		c.FailOpen != 3 || c.FailClosed != 2 || c.Fallback != 3 {
		t.Fatalf("counters during the outage: %+v (hook saw %d failures)", c, hooked)
	}
	if s := st.Stats(); s.Keys != 1 { // the fallback store's one state
		t.Fatalf("stats: %+v", s)
	}

	// Back up: go-redis reconnects, EVALSHA finds no script and EVAL reloads it. After many
	// failed dials go-redis itself redials only once a second (its pool's dial gate), so the
	// store is back within a second or two; 10 s is the "never" bound.
	srv.Restart()
	var d testserver.StoreDecision
	for deadline := time.Now().Add(10 * time.Second); ; {
		d = do(check("open"))[0]
		if st.Counters().Decided == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not back on Redis 10 s after the restart: %+v", st.Counters())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !d.Decision.Allowed || d.Decision.Remaining != 3 || !d.Committed {
		t.Fatalf("after restart (fresh Redis): %+v committed=%t", d.Decision, d.Committed)
	}
	// The fallback's two local admissions were charged to Redis by the first round trip back, so
	// they are not handed out again: 4 - 2 - this one.
	if d = do(check("fallback"))[0]; !d.Decision.Allowed || d.Decision.Remaining != 1 || !d.Committed {
		t.Fatalf("fallback after restart (fresh Redis, charged): %+v committed=%t", d.Decision, d.Committed)
	}
	if c := st.Counters(); c.Reconciled != 2 || c.Unreconciled != 0 {
		t.Fatalf("reconciliation: %+v", c)
	}
}

// TestServerKeepsServing: a testserver on the Redis store answers while Redis is down, per rule
// policy: 200 on a fail-open route, 429 with Retry-After on a fail-closed one.
func TestServerKeepsServing(t *testing.T) {
	srv := startRedis(t)
	st := openStore(t, srv.URL(), WithRulePolicy("open", FailOpen), WithRulePolicy("closed", FailClosed))
	ts := testserver.NewT(t, testserver.WithStore(st), testserver.WithRules(
		testserver.Rule{Name: "open", PathPrefix: "/open", Limit: 1, Window: time.Hour},
		testserver.Rule{Name: "closed", PathPrefix: "/closed", Limit: 1, Window: time.Hour},
	))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	get := func(path string) *http.Response {
		t.Helper()
		resp, err := (&http.Client{Transport: tr}).Get(ts.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// Up: each route's single request per hour, then 429.
	for _, p := range []string{"/open", "/closed"} {
		if r := get(p); r.StatusCode != http.StatusOK {
			t.Fatalf("%s with Redis up: %d", p, r.StatusCode)
		}
		if r := get(p); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("%s over the limit with Redis up: %d", p, r.StatusCode)
		}
	}
	srv.Stop()
	for range 3 {
		if r := get("/open"); r.StatusCode != http.StatusOK {
			t.Fatalf("/open with Redis down: %d, want 200 (fail-open)", r.StatusCode)
		}
		r := get("/closed")
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "1" {
			t.Fatalf("/closed with Redis down: %d Retry-After %q, want 429 and 1 (fail-closed)", r.StatusCode, r.Header.Get("Retry-After"))
		}
	}
	if c := st.Counters(); c.FailOpen != 3 || c.FailClosed != 3 || c.Errors < 1 {
		t.Fatalf("counters: %+v", c)
	}
}

// TestCallerCancellation: a caller whose context ends gets its error, not a policy decision, and
// it does not count as a Redis failure.
func TestCallerCancellation(t *testing.T) {
	st := openStore(t, startRedis(t).URL())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := testserver.StoreCheck{Rule: "r", Scope: "s", Key: "k", N: 1, Algorithm: mustAlg(t, algorithm.NameFixedWindow, 1, time.Second, 0)}
	if _, err := st.Apply(ctx, time.Now(), []testserver.StoreCheck{c}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply with a cancelled context: %v", err)
	}
	if got := st.Counters(); got.Decided+got.RoundTrips+got.Errors+got.Timeouts+got.PolicyDecisions() != 0 {
		t.Fatalf("counters: %+v", got)
	}
}
