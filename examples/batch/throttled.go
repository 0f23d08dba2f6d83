package main

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/dialects"
)

// throttleCounter wraps the transport attempts go out on and counts the throttled answers among
// them, read as the API that sent them means them (dialects.Read): a 429, GitHub's 403 with its
// quota used up or a secondary limit, Salesforce's 403 with the daily limit used up, and so on; and
// every 503, which many APIs and proxies answer when they shed load. It sees every attempt, the
// retried ones and the last, once each. It is safe for concurrent use.
type throttleCounter struct {
	next      http.RoundTripper
	throttled atomic.Int64
}

// RoundTrip sends req through next and counts a throttled answer. Reading the answer may replace
// its body with one that reads the same (see dialects.Read).
func (t *throttleCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp != nil && throttledAnswer(resp, time.Now()) {
		t.throttled.Add(1)
	}
	return resp, err
}

// throttledAnswer reports whether resp says the server is throttling: a 503, or what its dialect
// calls a throttle.
func throttledAnswer(resp *http.Response, now time.Time) bool {
	if resp.StatusCode < 400 {
		return false
	}
	return resp.StatusCode == http.StatusServiceUnavailable || dialects.Read(resp, now).Throttled
}

// count is the number of throttled answers seen.
func (t *throttleCounter) count() int64 { return t.throttled.Load() }

// CloseIdleConnections closes next's idle connections, if it has that method.
func (t *throttleCounter) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
