package testserver

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// BenchmarkDecide measures one decision per request through the limiter and the memory store,
// for one rule and for three rules (all-or-nothing over three keys).
func BenchmarkDecide(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	rules := []Rule{
		{Name: "per-ip", Key: KeyIP, Algorithm: "token-bucket", Limit: 1 << 40, Window: time.Second},
		{Name: "per-user", Key: "user+route", Algorithm: "sliding-window", Limit: 1 << 40, Window: time.Second},
		{Name: "global", Algorithm: "fixed-window", Limit: 1 << 40, Window: time.Second},
	}
	for _, n := range []int{1, 3} {
		b.Run(strconv.Itoa(n)+"-rules", func(b *testing.B) {
			l := mustLimiter(rules[:n], WithClock(func() time.Time { return now }))
			defer l.Close()
			r := req("GET", "/v1/items", "192.0.2.1:1", "X-User-ID", "42")
			b.ReportAllocs()
			for b.Loop() {
				if res, err := l.Decide(r); err != nil || !res.Allowed {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkMiddleware measures the middleware around an empty handler, headers included.
func BenchmarkMiddleware(b *testing.B) {
	l := mustLimiter([]Rule{{Name: "per-ip", Key: KeyIP, Limit: 1 << 40, Window: time.Second}})
	defer l.Close()
	h := l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := req("GET", "/", "192.0.2.1:1")
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}
