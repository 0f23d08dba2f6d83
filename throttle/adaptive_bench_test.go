package throttle

import (
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// BenchmarkAdaptiveReserveObserve measures one request's cost in an Adaptive limiter: a Reserve
// that is due at once and the Observe of its response, with explicit time (no clock read), for a
// response without rate-limit headers, one with the IETF fields, and from many goroutines:
//
//	go test -run '^$' -bench AdaptiveReserveObserve -benchmem ./throttle
func BenchmarkAdaptiveReserveObserve(b *testing.B) {
	plain := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}}, Body: http.NoBody}
	h := http.Header{}
	ratelimitheader.Write(h, ratelimitheader.Fields{Limit: 1 << 40, Window: time.Second, Remaining: 1 << 39, Reset: time.Second})
	declared := &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}
	for _, c := range []struct {
		name string
		resp *http.Response
	}{{"no headers", plain}, {"RateLimit headers", declared}} {
		b.Run(c.name, func(b *testing.B) {
			a, err := NewAdaptive(WithRateBounds(1, 1e9), WithInitialRate(1e9))
			if err != nil {
				b.Fatal(err)
			}
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Microsecond)
				r, err := a.Reserve(now)
				if err != nil {
					b.Fatal(err)
				}
				now = now.Add(r.Delay(now))
				a.Observe(now, c.resp, nil)
			}
		})
	}
	b.Run("no headers parallel", func(b *testing.B) {
		a, err := NewAdaptive(WithRateBounds(1, 1e9), WithInitialRate(1e9))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				now := time.Now()
				r, err := a.Reserve(now)
				if err != nil {
					b.Error(err)
					return
				}
				a.Observe(now.Add(r.Delay(now)), plain, nil)
			}
		})
	})
}
