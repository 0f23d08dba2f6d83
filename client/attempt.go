package client

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// AttemptObserver is an Observer that also sees each attempt from its start to its end and can
// give the attempt a context of its own, for example to carry a tracing span per attempt. It is an
// optional interface: WithObserver takes any Observer, and when it also implements
// AttemptObserver the stack calls these two methods as well. An Observer that does not implement it
// costs nothing more; one that does costs a shallow copy of the request per attempt and one per
// request.
//
// The methods are called synchronously on the request's goroutine, so they must be quick and safe
// for concurrent use; they must not modify the request nor read or close a response body.
type AttemptObserver interface {
	Observer
	// AttemptStarted is called when an attempt leaves the retry layer, before it waits for the
	// breaker and the throttle (so those waits belong to the attempt). ctx is the request's context;
	// the returned context becomes the attempt's (derive it from ctx; return ctx to keep it). The
	// throttle's Throttled event for the attempt is called with a request carrying that context.
	AttemptStarted(ctx context.Context, a AttemptInfo) context.Context
	// AttemptEnded is called when the attempt obtained its response headers or failed, with the
	// context AttemptStarted returned. Every AttemptStarted is followed by exactly one AttemptEnded.
	AttemptEnded(ctx context.Context, a AttemptResult)
}

// AttemptInfo describes one attempt of a request.
type AttemptInfo struct {
	// Request is the attempt's request (do not modify it).
	Request *http.Request
	// Key is the key the attempt is paced by (request.WithKey, WithKeyFunc, or the URL's host).
	Key string
	// Number counts the request's attempts from 1; Number-1 is the number of times it was sent
	// again (OpenTelemetry's http.request.resend_count).
	Number int
}

// AttemptResult is the end of one attempt: its response or its error (as the layers below the
// retry layer returned them: the breaker's and the throttle's refusals are errors too) and how
// long it took, waits for the breaker and the throttle included.
type AttemptResult struct {
	AttemptInfo
	Response *http.Response
	Err      error
	Elapsed  time.Duration
}

// attemptCounter numbers the attempts of one request; the stack puts it in the request's context
// (only when an AttemptObserver is present), and the attempt layer below the retry layer counts.
type attemptCounter struct{ n atomic.Int32 }

type attemptCounterKey struct{}

// withAttemptCounter returns req with a fresh attempt counter in its context.
func withAttemptCounter(req *http.Request) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), attemptCounterKey{}, new(attemptCounter)))
}

// attemptTransport sits between the retry layer and the breaker (or the throttle) and reports
// every attempt to the AttemptObservers.
type attemptTransport struct {
	next  http.RoundTripper
	obs   []AttemptObserver
	keyOf func(*http.Request) string
}

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	n := 1
	if c, ok := ctx.Value(attemptCounterKey{}).(*attemptCounter); ok {
		n = int(c.n.Add(1))
	}
	info := AttemptInfo{Request: req, Key: t.keyOf(req), Number: n}
	for _, o := range t.obs {
		ctx = o.AttemptStarted(ctx, info)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	res := AttemptResult{AttemptInfo: info, Response: resp, Err: err, Elapsed: time.Since(start)}
	for i := len(t.obs) - 1; i >= 0; i-- { // in reverse, as deferred calls: the first started ends last
		t.obs[i].AttemptEnded(ctx, res)
	}
	return resp, err
}

func (t *attemptTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
