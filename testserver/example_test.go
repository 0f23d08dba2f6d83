package testserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/steadyhttp/steady/testserver"
)

// The Go-test use: start a rate-limited server in-process, point the code under test at its URL,
// and look at what it answered. A fixed clock makes the answers exact.
func Example() {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	s, err := testserver.New(
		testserver.WithClock(func() time.Time { return now }),
		testserver.WithRules(testserver.Rule{Name: "api", Algorithm: "token-bucket", Limit: 2, Window: time.Minute}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close() // in a test: t.Cleanup(s.Close), or s := testserver.NewT(t, ...)

	for range 3 {
		resp, err := http.Get(s.URL() + "/v1/items")
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		line := fmt.Sprint(resp.StatusCode, " ", resp.Header.Get("RateLimit"), " ", resp.Header.Get("Retry-After"))
		fmt.Println(strings.TrimSpace(line))
	}
	st := s.Stats().Rules["api"]
	fmt.Printf("allowed %d, denied %d\n", st.Allowed, st.Denied)
	// Output:
	// 200 "api";r=1;t=30
	// 200 "api";r=0;t=60
	// 429 "api";r=0;t=60 30
	// allowed 2, denied 1
}

// The middleware use: put the limiter in front of any http.Handler.
func ExampleMiddleware() {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	h, err := testserver.Middleware(api, []testserver.Rule{{
		Name: "per-key", Key: testserver.KeyHeader("X-API-Key"), Limit: 1, Window: time.Second,
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"alice", "alice", "bob"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-API-Key", key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		fmt.Println(strings.TrimSpace(fmt.Sprint(key, " ", rec.Code, " ", rec.Header().Get("Retry-After"))))
	}
	// Output:
	// alice 200
	// alice 429 1
	// bob 200
}

// Several limits on one request: a request must pass both, and a denial by one consumes nothing
// from the other. Rules can be replaced at runtime.
func ExampleLimiter_SetRules() {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	perUser := testserver.Rule{Name: "per-user", Key: testserver.KeyUser, Algorithm: "fixed-window", Limit: 1, Window: time.Hour,
		Tiers: map[string]testserver.Tier{"user:241531": {Limit: 3}}}
	l, err := testserver.NewLimiter([]testserver.Rule{perUser}, testserver.WithClock(func() time.Time { return now }))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	try := func(user string) bool {
		r := httptest.NewRequest("GET", "/v1/items", nil)
		r.Header.Set("X-User-ID", user)
		res, err := l.Decide(r)
		return err == nil && res.Allowed
	}
	fmt.Println(try("1"), try("1"), try("241531"), try("241531"))

	// Add a server-wide limit; per-user state is kept because that rule did not change.
	global := testserver.Rule{Name: "global", Algorithm: "sliding-log", Limit: 3, Window: time.Hour}
	if err := l.SetRules([]testserver.Rule{global, perUser}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(try("1"), try("241531"), try("2"), try("3"), try("4"))
	// Output:
	// true false true true
	// false true true true false
}

// A configuration file maps onto Rules; errors name the rule and the field.
func ExampleDecodeConfig() {
	cfg, err := testserver.DecodeConfig(strings.NewReader(`{
	  "rules": [{"name": "per-ip", "key": "ip", "algorithm": "sliding-window", "limit": 100, "window": "1m"}]
	}`))
	fmt.Println(cfg.Rules[0].Name, cfg.Rules[0].Limit, cfg.Rules[0].Window, err)

	_, err = testserver.DecodeConfig(strings.NewReader(`[{"name": "x", "limit": 10, "window": "10 seconds"}]`))
	fmt.Println(err)
	// Output:
	// per-ip 100 1m0s <nil>
	// testserver: rule 0 ("x"): field window = "10 seconds": not a Go duration such as "1m" or "500ms": time: unknown unit " seconds" in duration "10 seconds"
}
