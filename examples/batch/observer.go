package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
)

// counter is the client.Observer that counts the retries the stack made, notes each request's
// attempts in its track, and, when say is set, says the first retry after a transport error: a URL
// nothing answers, retried with backoff in silence, looks like a hang. It is safe for concurrent
// use.
type counter struct {
	client.NopObserver
	retries atomic.Int64
	say     func(string) // nil: silent (-v logs every retry instead)
	said    sync.Once
}

// Attempt notes the attempt's number in the request's track.
func (c *counter) Attempt(req *http.Request, attempt int) {
	if tr := trackOf(req.Context()); tr != nil {
		tr.attempts.Store(int64(attempt))
	}
}

// Retry counts the retry, and says the first one after a transport error.
func (c *counter) Retry(_ *http.Request, attempt int, reason retry.Reason, wait time.Duration) {
	c.retries.Add(1)
	if reason.Err != nil && c.say != nil {
		c.said.Do(func() {
			c.say(fmt.Sprintf("batch: retrying after %v (attempt %d; said once, -v says each)", reason.Err, attempt))
		})
	}
}

// track is one logical request's state for the observer, carried in the request's context (the
// retry layer's clones share it).
type track struct {
	attempts atomic.Int64 // the number of the last attempt made, 0 before the first
}

type trackKey struct{}

// withTrack returns ctx carrying a fresh track.
func withTrack(ctx context.Context) context.Context {
	return context.WithValue(ctx, trackKey{}, &track{})
}

// trackOf returns the track in ctx, or nil.
func trackOf(ctx context.Context) *track {
	tr, _ := ctx.Value(trackKey{}).(*track)
	return tr
}
