package learn_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// BenchmarkSteadyState measures what the learner costs per request once nothing it learns
// changes: one Reserve and one ObserveAttempt of an answer a microsecond later, on an explicit
// clock (advanced by hand, so the clock's own reading is not counted), against a server that says
// nothing (headers=none: the startup's slow start, opened), one that sends eight ordinary headers
// and no limit (headers=plain: the dialects look for limit fields among them), and one that
// declares a quota of 60,000 a minute with 59,000 left on every answer (headers=declared: the
// declared strategy spending its credit, its window lane set). headers=none is the learner's
// share of client.BenchmarkOverhead. Compare with benchstat:
//
//	go test -run '^$' -bench SteadyState -benchmem -count 10 ./throttle/learn > new.txt && benchstat new.txt
func BenchmarkSteadyState(b *testing.B) {
	for _, c := range []struct {
		name string
		resp *http.Response
	}{
		{"headers=none", resp(200)},
		{"headers=plain", resp(200, "Content-Type: application/json", "Content-Length: 512", "Date: Thu, 26 Nov 2026 10:00:00 GMT",
			"Server: nginx", "Cache-Control: no-store", "Vary: Accept-Encoding", "Etag: \"33a64df551\"", "Connection: keep-alive")},
		{"headers=declared", resp(200, "X-RateLimit-Limit: 60000", "X-RateLimit-Remaining: 59000", "X-RateLimit-Reset: 60")},
	} {
		b.Run(c.name, func(b *testing.B) {
			l, err := learn.New()
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now() // with a monotonic reading, as the throttle passes them
			// Past the slow start: every request answered before the next one leaves.
			for range 2048 {
				now = now.Add(time.Microsecond)
				if _, err := l.Reserve(now); err != nil {
					b.Fatal(err)
				}
				l.ObserveAttempt(now, now.Add(time.Microsecond), c.resp, nil)
			}
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Microsecond)
				r, err := l.Reserve(now)
				if err != nil || r.Delay(now) != 0 {
					b.Fatalf("not due at once (err %v)", err)
				}
				l.ObserveAttempt(now, now.Add(time.Microsecond), c.resp, nil)
			}
		})
	}
}
