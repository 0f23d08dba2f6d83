package dialects

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Header sets quoted from GitHub's documentation (REST API "Rate limits", the classic
// "Rate Limiting" section: "Date: Mon, 01 Jul 2013 17:27:06 GMT / X-RateLimit-Limit: 60 /
// X-RateLimit-Remaining: 56 / X-RateLimit-Reset: 1372700873", and its 403 example), and from a real
// search response quoted in KnpLabs/php-github-api#1072; bodies are GitHub's documented messages.
func TestGitHubFixtures(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // far from the Dates: only Date may be used
	const secondary = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	const permission = `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`
	tests := []struct {
		name string
		resp *http.Response
		want Reading
	}{
		{
			name: "docs: status of an unauthenticated client",
			resp: response(200, "", "Date", "Mon, 01 Jul 2013 17:27:06 GMT", "X-GitHub-Media-Type", "github.v3",
				"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "56", "X-RateLimit-Reset", "1372700873"),
			// 1372700873 is 17:47:53 UTC that day: 20 min 47 s after Date.
			want: Reading{Dialect: "github", Quotas: []Quota{{Limit: 60, Remaining: 56, HasRemaining: true, Reset: 1247 * time.Second, HasReset: true, ResetAt: time.Unix(1372700873, 0).UTC(), ResetGrain: 2 * time.Second}}},
		},
		{
			name: "docs: primary limit exceeded, 403 with remaining 0",
			resp: response(403, `{"message":"API rate limit exceeded for xxx.xxx.xxx.xxx."}`, "Date", "Tue, 20 Aug 2013 14:50:41 GMT", "X-GitHub-Media-Type", "github.v3",
				"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1377013266"),
			want: Reading{Dialect: "github", Throttled: true, RetryAfter: 3025 * time.Second, HasRetryAfter: true, RetryAfterGrain: 2 * time.Second,
				Quotas: []Quota{{Limit: 60, Remaining: 0, HasRemaining: true, Reset: 3025 * time.Second, HasReset: true, ResetAt: time.Unix(1377013266, 0).UTC(), ResetGrain: 2 * time.Second}}},
		},
		{
			name: "real search response: resource is the bucket, per-minute window",
			resp: response(200, "", "Date", "Mon, 13 Jun 2022 11:48:53 GMT", "X-RateLimit-Limit", "30", "X-RateLimit-Remaining", "14",
				"X-RateLimit-Reset", "1655120964", "X-RateLimit-Used", "16", "X-RateLimit-Resource", "search"),
			want: Reading{Dialect: "github", Bucket: "search", Quotas: []Quota{{Name: "search", Limit: 30, Window: time.Minute, WindowAssumed: true,
				Remaining: 14, HasRemaining: true, Reset: 31 * time.Second, HasReset: true, ResetAt: time.Unix(1655120964, 0).UTC(), ResetGrain: 2 * time.Second}}},
		},
		{
			name: "secondary limit with retry-after and quota left",
			resp: response(403, secondary, "X-GitHub-Request-Id", "CE2A:1", "retry-after", "60", "x-ratelimit-limit", "5000",
				"x-ratelimit-remaining", "4312", "x-ratelimit-resource", "core"),
			want: Reading{Dialect: "github", Throttled: true, RetryAfter: time.Minute, HasRetryAfter: true, Bucket: "core",
				Quotas: []Quota{{Name: "core", Limit: 5000, Window: time.Hour, WindowAssumed: true, Remaining: 4312, HasRemaining: true}}},
		},
		{
			name: "secondary limit told by its body only: wait at least one minute",
			resp: response(403, secondary, "X-GitHub-Request-Id", "CE2A:1", "x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4312"),
			want: Reading{Dialect: "github", Throttled: true, RetryAfter: time.Minute, HasRetryAfter: true,
				Quotas: []Quota{{Limit: 5000, Remaining: 4312, HasRemaining: true}}},
		},
		{
			name: "permission error 403 with quota left stays non-throttled",
			resp: response(403, permission, "X-GitHub-Request-Id", "CE2A:1", "x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4312"),
			want: Reading{Dialect: "github", Quotas: []Quota{{Limit: 5000, Remaining: 4312, HasRemaining: true}}},
		},
		{
			name: "429 without retry-after or remaining 0: secondary, one minute",
			resp: response(429, "", "X-GitHub-Request-Id", "CE2A:1"),
			want: Reading{Dialect: "github", Throttled: true, RetryAfter: time.Minute, HasRetryAfter: true},
		},
		{
			name: "graphql counts points per hour",
			resp: response(200, "", "x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4980", "x-ratelimit-resource", "graphql"),
			want: Reading{Dialect: "github", Bucket: "graphql", Quotas: []Quota{{Name: "graphql", Unit: UnitPoints, Limit: 5000, Window: time.Hour, WindowAssumed: true, Remaining: 4980, HasRemaining: true}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Read(tt.resp, now))
		})
	}
}

// The body read to tell a secondary limit from a permission error is given back whole, also when
// it is longer than what was read, and closing the restored body closes the original.
func TestGitHubBodyRestored(t *testing.T) {
	long := `{"message":"Must have admin rights to Repository.","padding":"` + string(make([]byte, 3*githubBodyLimit)) + `"}`
	for _, body := range []string{`{"message":"You have exceeded a secondary rate limit."}`, long} {
		resp := response(403, body, "X-GitHub-Request-Id", "1", "x-ratelimit-remaining", "10")
		closed := &closeRecorder{Reader: resp.Body}
		resp.Body = closed
		Read(resp, time.Now())
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, body, string(got))
		require.NoError(t, resp.Body.Close())
		assert.True(t, closed.closed, "closing the restored body closes the original")
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// A 403 from a host forced to GitHub has its body read even without a GitHub header; from an
// unrecognised host it is not (its body is not touched).
func TestGitHubForcedHost(t *testing.T) {
	r, err := NewReader(ForHost("ghe.example.com", "github"))
	require.NoError(t, err)
	body := `{"message":"You have exceeded a secondary rate limit."}`
	resp := response(403, body)
	resp.Request, _ = http.NewRequest(http.MethodGet, "https://ghe.example.com:443/api/v3/user", nil)
	got := r.Read(resp, time.Now())
	assert.Equal(t, Reading{Dialect: "github", Throttled: true, RetryAfter: time.Minute, HasRetryAfter: true}, got)

	other := response(403, body)
	orig := other.Body
	assert.Equal(t, Reading{}, Read(other, time.Now()))
	assert.Equal(t, orig, other.Body, "a 403 of an unknown API keeps its body untouched")
}
