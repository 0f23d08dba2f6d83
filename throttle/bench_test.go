package throttle

import (
	"context"
	"net/http"
	"testing"
)

// BenchmarkRoundTrip measures the Transport's overhead per request over a bare in-memory
// RoundTripper (compare with the "bare" case): go test -bench . -benchmem ./throttle
func BenchmarkRoundTrip(b *testing.B) {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}}, Body: http.NoBody}
	bare := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/v1/items", nil)
	if err != nil {
		b.Fatal(err)
	}
	mustNew := func(opts ...Option) *Throttle {
		th, err := New(opts...)
		if err != nil {
			b.Fatal(err)
		}
		return th
	}
	cases := []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", bare},
		{"no pace", NewTransport(bare, mustNew())},
		{"token bucket never waiting", NewTransport(bare, mustNew(WithLimiter(func(string) (Limiter, error) {
			return NewTokenBucket(1e12, 1<<30)
		})))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.rt.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+" parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.rt.RoundTrip(req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
