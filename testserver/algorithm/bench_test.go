package algorithm

import (
	"testing"
	"time"
)

// BenchmarkDecideCommit measures one Decide plus, when admitted, one Commit on a key kept at about
// its limit: time advances by one emission interval per request, so admissions and denials mix.
// Compare the algorithms side by side with benchstat.
func BenchmarkDecideCommit(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			a := mustNew(name, Config{Limit: 100, Window: time.Second})
			var s State
			now := t0ns
			step := int64(time.Second) / 110 // a little above the limit
			b.ReportAllocs()
			for b.Loop() {
				now += step
				t := ts(now)
				if a.Decide(&s, t, 1).Allowed {
					a.Commit(&s, t, 1)
				}
			}
		})
	}
}

// BenchmarkTake is BenchmarkDecideCommit with Take, which reads the State once.
func BenchmarkTake(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			a := mustNew(name, Config{Limit: 100, Window: time.Second})
			var (
				s State
				d Decision
			)
			now := t0ns
			step := int64(time.Second) / 110 // a little above the limit
			b.ReportAllocs()
			for b.Loop() {
				now += step
				Take(a, &s, ts(now), 1, &d)
			}
		})
	}
}
