package dialects

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Header sets from APIs' documentation: lemlist ("Retry-After": 2, "X-RateLimit-Limit": 20,
// "X-RateLimit-Remaining": 7, "X-RateLimit-Reset": "Tue Feb 16 2021 09:02:42 GMT+0100 (Central
// European Standard Time)"), statbot (x-ratelimit-limit 10, -remaining 5, -reset 60 seconds,
// retry-after 30), Netlify (X-RateLimit-Limit: 500, -Remaining: 56, -Reset: 1372700873, Unix
// seconds), Jira Cloud (429 with Retry-After and X-RateLimit-Reset "in ISO 8601 format ...
// yyyy-MM-ddTHH:mmZ"), MailerLite (X-RateLimit-Retry-After, seconds) and X (x-rate-limit-limit:
// 900, x-rate-limit-remaining: 847, x-rate-limit-reset: 1705420800).
func TestXRateLimitFixtures(t *testing.T) {
	now := time.Unix(1_900_000_000, 0) // far from every Date below: only Date may be used
	tests := []struct {
		name   string
		status int
		hdrs   []string
		want   Reading
	}{
		{
			name: "lemlist: JavaScript Date reset", status: 200,
			hdrs: []string{"Date", "Tue, 16 Feb 2021 08:02:40 GMT", "Retry-After", "2", "X-RateLimit-Limit", "20", "X-RateLimit-Remaining", "7",
				"X-RateLimit-Reset", "Tue Feb 16 2021 09:02:42 GMT+0100 (Central European Standard Time)"},
			want: Reading{Dialect: "x-ratelimit", RetryAfter: 2 * time.Second, HasRetryAfter: true,
				Quotas: []Quota{{Limit: 20, Remaining: 7, HasRemaining: true, Reset: 2 * time.Second, HasReset: true, ResetAt: time.Date(2021, 2, 16, 8, 2, 42, 0, time.UTC)}}},
		},
		{
			name: "statbot: delta seconds", status: 429,
			hdrs: []string{"x-ratelimit-limit", "10", "x-ratelimit-remaining", "5", "x-ratelimit-reset", "60", "retry-after", "30"},
			want: Reading{Dialect: "x-ratelimit", Throttled: true, RetryAfter: 30 * time.Second, HasRetryAfter: true,
				Quotas: []Quota{{Limit: 10, Remaining: 5, HasRemaining: true, Reset: time.Minute, HasReset: true, ResetGrain: time.Second}}},
		},
		{
			name: "Netlify: Unix seconds against Date", status: 200,
			hdrs: []string{"Date", "Mon, 01 Jul 2013 17:27:06 GMT", "X-RateLimit-Limit", "500", "X-RateLimit-Remaining", "56", "X-RateLimit-Reset", "1372700873"},
			want: Reading{Dialect: "x-ratelimit", Quotas: []Quota{{Limit: 500, Remaining: 56, HasRemaining: true, Reset: 1247 * time.Second, HasReset: true, ResetAt: time.Unix(1372700873, 0).UTC(), ResetGrain: 2 * time.Second}}},
		},
		{
			name: "Jira Cloud: ISO 8601 minutes", status: 429,
			hdrs: []string{"Date", "Thu, 26 Mar 2026 15:59:30 GMT", "Retry-After", "30", "X-RateLimit-Reset", "2026-03-26T16:00Z"},
			want: Reading{Dialect: "x-ratelimit", Throttled: true, RetryAfter: 30 * time.Second, HasRetryAfter: true,
				Quotas: []Quota{{Reset: 30 * time.Second, HasReset: true, ResetAt: time.Date(2026, 3, 26, 16, 0, 0, 0, time.UTC)}}},
		},
		{
			name: "MailerLite: X-RateLimit-Retry-After", status: 429,
			hdrs: []string{"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0", "X-RateLimit-Retry-After", "12"},
			want: Reading{Dialect: "x-ratelimit", Throttled: true, RetryAfter: 12 * time.Second, HasRetryAfter: true,
				Quotas: []Quota{{Limit: 60, Remaining: 0, HasRemaining: true}}},
		},
		{
			name: "Unix milliseconds and fractions", status: 200,
			hdrs: []string{"Date", "Wed, 18 May 2033 03:33:20 GMT", "X-RateLimit-Limit", "100, 100;w=60", "X-RateLimit-Reset", "2000000001500"},
			want: Reading{Dialect: "x-ratelimit", Quotas: []Quota{{Limit: 100, Window: time.Minute, Reset: 1500 * time.Millisecond, HasReset: true, ResetAt: time.UnixMilli(2000000001500).UTC()}}},
		},
		{
			name: "X (Twitter) docs", status: 200,
			hdrs: []string{"Date", "Tue, 16 Jan 2024 15:45:00 GMT", "x-rate-limit-limit", "900", "x-rate-limit-remaining", "847", "x-rate-limit-reset", "1705420800"},
			want: Reading{Dialect: "twitter", Quotas: []Quota{{Limit: 900, Remaining: 847, HasRemaining: true, Reset: 15 * time.Minute, HasReset: true, ResetAt: time.Unix(1705420800, 0).UTC(), ResetGrain: 2 * time.Second}}},
		},
		{
			name: "X 429", status: 429,
			hdrs: []string{"Date", "Tue, 16 Jan 2024 15:59:59 GMT", "x-rate-limit-limit", "900", "x-rate-limit-remaining", "0", "x-rate-limit-reset", "1705420800"},
			want: Reading{Dialect: "twitter", Throttled: true, Quotas: []Quota{{Limit: 900, Remaining: 0, HasRemaining: true, Reset: time.Second, HasReset: true, ResetAt: time.Unix(1705420800, 0).UTC(), ResetGrain: 2 * time.Second}}},
		},
		{
			// sethvargo/go-limiter's httplimit middleware (v0.7.1, middleware.go) writes the reset,
			// and on a 429 Retry-After, as time.RFC1123 of a UTC time: "UTC" where HTTP says "GMT".
			// The date is truncated to its second: read rounded up by it, with a grain of two
			// against the Date header.
			name: "sethvargo/go-limiter: RFC 1123 dates in UTC", status: 429,
			hdrs: []string{"Date", "Fri, 27 Nov 2026 12:03:32 GMT", "X-RateLimit-Limit", "20", "X-RateLimit-Remaining", "0",
				"X-RateLimit-Reset", "Fri, 27 Nov 2026 12:03:32 UTC", "Retry-After", "Fri, 27 Nov 2026 12:03:32 UTC"},
			want: Reading{Dialect: "x-ratelimit", Throttled: true, RetryAfter: time.Second, HasRetryAfter: true, RetryAfterGrain: time.Second,
				Quotas: []Quota{{Limit: 20, Remaining: 0, HasRemaining: true, Reset: time.Second, HasReset: true, ResetAt: time.Date(2026, 11, 27, 12, 3, 32, 0, time.UTC), ResetGrain: 2 * time.Second}}},
		},
		{
			name: "HTTP-date reset without Date: against now", status: 200,
			hdrs: []string{"X-RateLimit-Limit", "20", "X-RateLimit-Reset", "Sun, 17 Mar 2030 17:46:50 GMT"}, // now + 10 s
			want: Reading{Dialect: "x-ratelimit", Quotas: []Quota{{Limit: 20, Reset: 11 * time.Second, HasReset: true, ResetAt: time.Date(2030, 3, 17, 17, 46, 50, 0, time.UTC), ResetGrain: time.Second}}},
		},
		{
			name: "garbage is ignored field by field", status: 200,
			hdrs: []string{"X-RateLimit-Limit", "-5", "X-RateLimit-Remaining", "12", "X-RateLimit-Reset", "soon"},
			want: Reading{Dialect: "x-ratelimit", Quotas: []Quota{{Remaining: 12, HasRemaining: true}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Read(response(tt.status, "", tt.hdrs...), now))
		})
	}
}
