package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThrottledAnswer: the throttled count reads each answer as its API means it. The header sets
// are GitHub's and Stripe's documented answers, written out here, not produced by testserver.
func TestThrottledAnswer(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   bool
	}{
		{"429 alone", 429, nil, "", true},
		{"503 alone", 503, nil, "", true},
		{"GitHub primary limit: 403 with nothing remaining", 403, http.Header{
			"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Used": {"5000"},
			"X-Ratelimit-Reset": {"1735787045"}, "X-Ratelimit-Resource": {"core"},
		}, `{"message":"API rate limit exceeded for user ID 1."}`, true},
		{"GitHub secondary limit: 403 with retry-after", 403, http.Header{
			"Retry-After": {"60"}, "X-Ratelimit-Remaining": {"4990"}, "X-Ratelimit-Resource": {"core"},
		}, `{"message":"You have exceeded a secondary rate limit."}`, true},
		{"GitHub permission error: 403 with quota left", 403, http.Header{
			"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"4999"}, "X-Ratelimit-Resource": {"core"},
		}, `{"message":"Resource not accessible by integration"}`, false},
		{"plain 403", 403, nil, "forbidden", false},
		{"500", 500, nil, "", false},
		{"200 with nothing remaining", 200, http.Header{"X-Ratelimit-Remaining": {"0"}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: tt.header, Body: io.NopCloser(strings.NewReader(tt.body))}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			assert.Equal(t, tt.want, throttledAnswer(resp, now))
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(b), "the body reads as it was")
		})
	}
}

// TestServerDialectThrottlesCounted: against the embedded server answering as GitHub (a fixed
// window, its exhausted quota answered 403 with remaining 0), told a rate far above the limit so
// that it must be throttled, the batch loses nothing, and counts every 403 the server sent as a
// throttled answer, each retried.
func TestServerDialectThrottlesCounted(t *testing.T) {
	code, s, _ := runJSON(t, t.Context(), "-n", "60", "-c", "8", "-rate", "2000",
		"-server-dialect", "github", "-server-limit", "25")
	require.Equal(t, 0, code)
	assert.Equal(t, 60, s.Succeeded)
	require.NotNil(t, s.ServerThrottled)
	assert.Positive(t, *s.ServerThrottled, "the server throttled")
	assert.Equal(t, *s.ServerThrottled, s.ThrottledResponses, "every 403 counted")
	assert.Equal(t, s.ThrottledResponses, s.Retries, "and retried")

	_, _, errOut := runBatch(t, t.Context(), "-n", "5", "-server-dialect", "shopify")
	assert.Contains(t, errOut, "embedded testserver: leaky-bucket", "the persona's limiter kind")
	assert.Contains(t, errOut, "answering as shopify")
}

func TestServerDialectFlags(t *testing.T) {
	tests := []struct {
		args      []string
		wantAlgo  string
		wantBurst int64
	}{
		{[]string{"-server-dialect", "github"}, "fixed-window", 0},
		{[]string{"-server-dialect", "shopify"}, "leaky-bucket", defaultServerBurst},
		{[]string{"-server-dialect", "openai"}, "token-bucket", defaultServerBurst},
		{[]string{"-server-dialect", "github", "-server-algorithm", "sliding-log"}, "sliding-log", 0},
		{[]string{"-server-dialect", "none"}, defaultServerAlgo, defaultServerBurst},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := parseFlags(tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAlgo, cfg.server.algorithm)
			assert.Equal(t, tt.wantBurst, cfg.server.burst)
		})
	}
}

func TestNewBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-server-dialect", "klingon"}, `invalid -server-dialect "klingon"`},
		{[]string{"-url", "http://127.0.0.1:1/", "-server-dialect", "github"}, "-server-dialect configures the embedded server"},
		{[]string{"-input", "x", "-n", "5"}, "-n 5 and -input x"},
		{[]string{"-resume"}, "-resume needs -output"},
		{[]string{"-output-headers"}, "-output-headers needs -output"},
		{[]string{"-output-body", "full"}, "-output-body full needs -output"},
		{[]string{"-output", "o", "-output-body", "all"}, `invalid -output-body "all"`},
		{[]string{"-input", "same", "-output", "same"}, "-output same is the -input"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runBatch(t, t.Context(), tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			assert.Contains(t, errOut, tt.want)
		})
	}
	// Bad files are reported on one line and fail the run before anything is sent.
	code, out, errOut := runBatch(t, t.Context(), "-input", "/no/such/file")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "no such file")
}

// TestDefaultMaxWait: the batch waits out the longest window it knows of, an hour at least (plus
// the whole-second slack of resets); -max-wait overrides it, 0 waiting without a bound.
func TestDefaultMaxWait(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration
	}{
		{nil, time.Hour + resetSlack},
		{[]string{"-url", "http://api.test/"}, time.Hour + resetSlack},
		{[]string{"-server-window", "3h", "-server-algorithm", "fixed-window"}, 3*time.Hour + resetSlack},
		{[]string{"-url", "http://api.test/", "-quota", "10000/24h", "-margin", "0"}, 24*time.Hour + resetSlack},
		{[]string{"-url", "http://api.test/", "-counter", "100/2h"}, 2*time.Hour + resetSlack},
		{[]string{"-max-wait", "5m"}, 5 * time.Minute},
		{[]string{"-max-wait", "0"}, 0},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := parseFlags(tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.maxWait)
		})
	}
}

// TestProgressBarShowsRateETAAndThrottled draws the terminal bar into a buffer, in virtual time.
func TestProgressBarShowsRateETAAndThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w bytes.Buffer
		var throttled int64
		b := newBar(&w, 4, func() int64 { return throttled })
		b.done()
		throttled = 3
		for range 2 {
			time.Sleep(redrawEvery) // the bar redraws at most this often
			b.done()
		}
		got := w.String()
		assert.Contains(t, got, "requests (3 throttled)")
		assert.Contains(t, got, "(3/4, 15 req/s)", "3 requests in 200 ms")
		assert.Contains(t, got, "[0s:0s]", "elapsed and ETA")

		var spin bytes.Buffer
		s := newBar(&spin, -1, func() int64 { return 0 })
		s.done()
		s.finish()
		assert.Contains(t, spin.String(), "requests (0 throttled)")
	})
}
