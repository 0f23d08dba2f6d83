package testserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/dialects"
)

// serve sends one request through a persona limiter's middleware at the fake clock's time and
// returns the response as a client would see it.
func serve(t *testing.T, l *Limiter) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })).
		ServeHTTP(rec, req(http.MethodGet, "/v1/items", "192.0.2.1:1234"))
	return rec.Result()
}

// Round trip persona -> parser, in addition to the parsers' vendor-documentation fixtures: each
// persona's throttle is read as a throttle of its dialect, with a wait that is never early.
func TestPersonaRoundTrip(t *testing.T) {
	tests := []struct {
		dialect   string
		status    int
		read      string // the dialect package's name for it
		retry     bool   // the denial says how long to wait
		algorithm string // the persona's default limiter kind
	}{
		{"ietf", 429, "ietf", true, "token-bucket"},
		{"x-ratelimit", 429, "x-ratelimit", true, "token-bucket"},
		{"github", 403, "github", true, "fixed-window"},
		{"openai", 429, "openai", true, "token-bucket"},
		{"anthropic", 429, "anthropic", true, "token-bucket"},
		{"shopify", 429, "shopify", true, "leaky-bucket"},
		{"discord", 429, "discord", true, "fixed-window"},
		{"stripe", 429, "stripe", false, "token-bucket"},
		{"none", 429, "", false, "token-bucket"},
	}
	require.ElementsMatch(t, Dialects(), []string{"ietf", "x-ratelimit", "github", "openai", "anthropic", "shopify", "discord", "stripe", "none"})
	for _, tt := range tests {
		t.Run(tt.dialect, func(t *testing.T) {
			clock := newFakeClock()
			l := mustLimiter([]Rule{{Limit: 2, Window: 10 * time.Second}}, WithClock(clock.Now), WithDialect(tt.dialect))
			defer l.Close()
			assert.Equal(t, tt.algorithm, l.Rules()[0].Algorithm)

			first := serve(t, l)
			require.Equal(t, http.StatusOK, first.StatusCode)
			rd := dialects.Read(first, clock.Now())
			assert.Equal(t, tt.read, rd.Dialect)
			assert.False(t, rd.Throttled)
			if q, ok := rd.QuotaOf(dialects.UnitRequests); ok && q.HasRemaining {
				assert.Equal(t, int64(1), q.Remaining, "one of two left after the first request")
			}

			serve(t, l)
			denied := serve(t, l)
			assert.Equal(t, tt.status, denied.StatusCode)
			rd = dialects.Read(denied, clock.Now())
			assert.Equal(t, tt.read, rd.Dialect)
			assert.True(t, rd.Throttled, "%+v", rd)
			assert.Equal(t, tt.retry, rd.HasRetryAfter, "%+v", rd)
			if !tt.retry {
				return
			}
			// Never early: waiting exactly the advertised time gets the next request in.
			clock.Advance(rd.RetryAfter)
			assert.Equal(t, http.StatusOK, serve(t, l).StatusCode, "after %v", rd.RetryAfter)
		})
	}
}

// GitHub's persona: a denial by a later rule is a secondary limit, a 403 with retry-after while
// the primary quota has requests left; dialects reads it as a throttle, not a permission error.
func TestGitHubPersonaSecondary(t *testing.T) {
	clock := newFakeClock()
	l := mustLimiter([]Rule{
		{Name: "core", Limit: 5000, Window: time.Hour},
		{Name: "burst", Limit: 1, Window: time.Minute, Algorithm: "sliding-log"},
	}, WithClock(clock.Now), WithDialect("github"))
	defer l.Close()
	require.Equal(t, http.StatusOK, serve(t, l).StatusCode)
	resp := serve(t, l)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"), "quota left on a secondary limit")
	rd := dialects.Read(resp, clock.Now())
	assert.True(t, rd.Throttled)
	assert.Equal(t, time.Minute, rd.RetryAfter)
	assert.Equal(t, "core", rd.Bucket)
}

// The persona's exact wire forms: Shopify's used/capacity and decimal Retry-After, OpenAI's
// Go-style durations, Anthropic's RFC 3339 instant, Discord's millisecond decimals.
func TestPersonaWireForms(t *testing.T) {
	clock := newFakeClock() // 1_700_000_000.3
	header := func(dialect string, rule Rule, n int) http.Header {
		l := mustLimiter([]Rule{rule}, WithClock(clock.Now), WithDialect(dialect))
		defer l.Close()
		var resp *http.Response
		for range n {
			resp = serve(t, l)
		}
		return resp.Header
	}
	// Shopify: a 40-request bucket leaking 2/s; 41 requests at once: the 41st is denied for 0.5 s.
	h := header("shopify", Rule{Limit: 40, Window: 20 * time.Second}, 41)
	assert.Equal(t, "40/40", h.Get("X-Shopify-Shop-Api-Call-Limit"))
	assert.Equal(t, "0.5", h.Get("Retry-After"))
	// OpenAI: 60 per minute refilled continuously; after one request, full again in 1 s.
	h = header("openai", Rule{Limit: 60, Window: time.Minute}, 1)
	assert.Equal(t, "59", h.Get("X-Ratelimit-Remaining-Requests"))
	assert.Equal(t, "1s", h.Get("X-Ratelimit-Reset-Requests"))
	// Anthropic: the same instant as RFC 3339, rounded up to the second: 1_700_000_001.3 -> ...002.
	h = header("anthropic", Rule{Limit: 60, Window: time.Minute}, 1)
	assert.Equal(t, "2023-11-14T22:13:22Z", h.Get("Anthropic-Ratelimit-Requests-Reset"))
	// Discord: a 5-per-5s window from 1_700_000_000 ends at ...005: reset-after 4.7 s.
	h = header("discord", Rule{Name: "abcd1234", Limit: 5, Window: 5 * time.Second}, 1)
	assert.Equal(t, "4.700", h.Get("X-RateLimit-Reset-After"))
	assert.Equal(t, "1700000005.000", h.Get("X-RateLimit-Reset"))
	assert.Equal(t, "abcd1234", h.Get("X-RateLimit-Bucket"))
}

func TestWithDialectErrors(t *testing.T) {
	_, err := NewLimiter(nil, WithDialect("klingon"))
	assert.True(t, errors.Is(err, ErrInvalidOption), "%v", err)
	// An explicit algorithm is kept.
	l := mustLimiter([]Rule{{Limit: 1, Window: time.Second, Algorithm: "sliding-window"}}, WithDialect("shopify"))
	defer l.Close()
	assert.Equal(t, "sliding-window", l.Rules()[0].Algorithm)
}
