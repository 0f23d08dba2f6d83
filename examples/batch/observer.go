package main

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
)

// counter is the client.Observer that counts what the stack did: retries, and throttled
// responses (429, or 503 which many APIs and proxies answer when they shed load), whether they
// were retried (a Retry event) or were the last word (a GaveUp event). It is safe for concurrent
// use.
type counter struct {
	client.NopObserver
	retries   atomic.Int64
	throttled atomic.Int64
}

// throttledStatus reports whether a status says the server is throttling.
func throttledStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// Retry counts the retry and, when the failed attempt was throttled, the throttled response.
func (c *counter) Retry(req *http.Request, attempt int, reason retry.Reason, _ time.Duration) {
	c.retries.Add(1)
	if throttledStatus(reason.Status) {
		c.throttled.Add(1)
	}
	if tr := trackOf(req); tr != nil {
		tr.lastRetried = attempt
	}
}

// GaveUp counts a throttled response that was not retried. When the context ends while waiting
// for a retry, the retry layer reports the same attempt again as given up; it was counted by
// Retry already.
func (c *counter) GaveUp(req *http.Request, attempts int, reason retry.Reason, _ error) {
	if tr := trackOf(req); tr != nil && tr.lastRetried == attempts {
		return
	}
	if throttledStatus(reason.Status) {
		c.throttled.Add(1)
	}
}

// track is one logical request's state for the observer, carried in the request's context (the
// retry layer's clones share it). The observer's events for one request come on the goroutine
// that sends it, one after the other, so it needs no lock.
type track struct {
	lastRetried int // the attempt number of the last Retry event, 0 for none
}

type trackKey struct{}

// withTrack returns ctx carrying a fresh track.
func withTrack(ctx context.Context) context.Context {
	return context.WithValue(ctx, trackKey{}, &track{})
}

// trackOf returns the track in req's context, or nil.
func trackOf(req *http.Request) *track {
	tr, _ := req.Context().Value(trackKey{}).(*track)
	return tr
}
