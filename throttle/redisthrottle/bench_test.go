package redisthrottle

import (
	"testing"
	"time"
)

// BenchmarkReserve measures one reservation on a loopback redis-server: one EVALSHA round trip
// and the script, with a known rate and with learning, from one caller and from many at once
// (go test -bench Reserve -benchmem ./throttle/redisthrottle).
func BenchmarkReserve(b *testing.B) {
	url := redisURL(b)
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"known", []Option{WithRate(MaxRate, 1000)}},
		{"learning", []Option{WithRateBounds(1, MaxRate), WithInitialRate(MaxRate / 2)}},
	} {
		b.Run(tc.name+"/serial", func(b *testing.B) {
			l, err := New(newClient(b, url), "bench-serial-"+tc.name, tc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				now := time.Now()
				r, _ := l.Reserve(now)
				r.Cancel(now)
			}
			if s := l.Stats(); s.Fallback != 0 {
				b.Fatalf("fallback used: %+v", s)
			}
		})
		b.Run(tc.name+"/parallel", func(b *testing.B) {
			l, err := New(newClient(b, url), "bench-parallel-"+tc.name, tc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(16) // 16 x GOMAXPROCS callers
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := l.Reserve(time.Now()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if s := l.Stats(); s.Fallback != 0 {
				b.Fatalf("fallback used: %+v", s)
			}
		})
	}
}

// BenchmarkObserve measures reporting a success (no Redis call: it rides on the next reservation).
func BenchmarkObserve(b *testing.B) {
	l, err := New(newClient(b, "redis://127.0.0.1:1/0"), "bench-observe")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Observe(time.Now(), ok200, nil)
	}
	if got := l.successes.Load(); got == 0 {
		b.Fatal("no success counted")
	}
}
