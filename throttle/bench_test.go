package throttle

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"
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

// BenchmarkWindowQuotaReserve measures Reserve of a window quota for a request that is due at once
// (it returns the shared due reservation, so 0 allocs are expected): at one instant (every request
// joins one run), and at exactly the quota, 1,000 per 1ms with one request every 1µs (a thousand
// runs live, one added and one forgotten per request, each request due exactly one window after the
// one 1,000 places before it). go test -bench WindowQuota -benchmem ./throttle
func BenchmarkWindowQuotaReserve(b *testing.B) {
	cases := []struct {
		name   string
		limit  int
		window time.Duration
		step   time.Duration
	}{
		{"due, one instant", math.MaxInt, time.Hour, 0},
		{"due, at the quota", 1000, time.Millisecond, time.Microsecond},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l, err := NewWindowQuota(c.limit, c.window)
			if err != nil {
				b.Fatal(err)
			}
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			for b.Loop() {
				r, err := l.Reserve(now)
				if err != nil || r.Delay(now) != 0 {
					b.Fatal("not due", err)
				}
				now = now.Add(c.step)
			}
		})
	}
}

// BenchmarkWindowQuotaCancelStorm measures a storm of cancellations: 10,000 requests wait behind a
// used-up window quota (all booked at one instant) and are cancelled front to back at that
// instant, so each Cancel schedules every request behind it again. One op is the whole storm of
// 10,000 cancellations; booking the requests is not timed. A leaky bucket with the same backlog is
// the reference (its Cancel also moves every request behind). go test -run '^$' -bench
// WindowQuotaCancelStorm -benchmem ./throttle
func BenchmarkWindowQuotaCancelStorm(b *testing.B) {
	const pending = 10_000
	cases := []struct {
		name string
		due  int // requests booked first, due at once
		new  func() (Limiter, error)
	}{
		{"limit 1", 1, func() (Limiter, error) { return NewWindowQuota(1, time.Second) }},
		{"limit 7", 7, func() (Limiter, error) { return NewWindowQuota(7, time.Second) }},
		{"leaky bucket (reference)", 1, func() (Limiter, error) { return NewLeakyBucket(1, pending) }},
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rs := make([]Reservation, pending)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				l, err := c.new()
				if err != nil {
					b.Fatal(err)
				}
				for range c.due {
					if _, err := l.Reserve(now); err != nil {
						b.Fatal(err)
					}
				}
				for i := range rs {
					if rs[i], err = l.Reserve(now); err != nil {
						b.Fatal(err)
					}
				}
				if rs[0].Delay(now) == 0 {
					b.Fatal("the first request behind the used-up window is due")
				}
				b.StartTimer()
				for _, r := range rs {
					r.Cancel(now)
				}
				// Every waiting request was given back: the next one takes the first one's place.
				if r, err := l.Reserve(now); err != nil || r.Delay(now) != time.Second {
					b.Fatal("after the storm, the next request is not due one second later", err)
				}
			}
		})
	}
}
