package ratelimitheader

import (
	"net/http"
	"testing"
	"time"
)

func BenchmarkParse(b *testing.B) {
	benchmarks := []struct {
		name string
		h    http.Header
	}{
		{"none", hdr("Content-Type", "application/json", "Content-Length", "512", "Date", refDate, "Server", "nginx")},
		{"draft", hdr("RateLimit-Policy", `"default";q=100;w=60`, "RateLimit", `"default";r=42;t=17`)},
		{"x-ratelimit", hdr("X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "42", "X-RateLimit-Reset", "17")},
		{"x-ratelimit-epoch", hdr("X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "4999", "X-RateLimit-Reset", "784112000", "Date", refDate)},
		{"written-429", func() http.Header {
			h := http.Header{}
			Write(h, Fields{Limit: 10, Window: time.Second, Reset: 300 * time.Millisecond, RetryAfter: 300 * time.Millisecond})
			return h
		}()},
		{"retry-after-date", hdr("Retry-After", "Sun, 06 Nov 1994 08:49:47 GMT", "Date", refDate)},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Parse(bm.h, refNow)
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	benchmarks := []struct {
		name string
		f    Fields
	}{
		{"ok", Fields{Policy: "default", Limit: 100, Window: time.Minute, Remaining: 42, Reset: 17 * time.Second}},
		{"throttled", Fields{Limit: 10, Window: 100 * time.Millisecond, Reset: 300 * time.Millisecond, RetryAfter: 300 * time.Millisecond}},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			h := http.Header{}
			for b.Loop() {
				Write(h, bm.f)
			}
		})
	}
}
