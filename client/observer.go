package client

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// Observer is told what the stack does with each request, for metrics and logs. Its methods are
// called synchronously on the request's goroutine, so they must be quick and safe for concurrent
// use; they must not modify req nor read or close a response body. Embed NopObserver to implement
// only some of them.
type Observer interface {
	// Queued is called when a request waited for a place in the queue (WithMaxInFlight) and got one;
	// waited is how long it stood in line. Requests admitted at once are not reported.
	Queued(req *http.Request, waited time.Duration)
	// Throttled is called when an attempt was held back by the local pace or by a pause of its key
	// (after a Retry-After) and then let through; waited is how long.
	Throttled(req *http.Request, key string, waited time.Duration)
	// Attempt is called before each attempt is sent; attempt counts from 1.
	Attempt(req *http.Request, attempt int)
	// Retry is called when an attempt failed with reason and another follows after wait.
	Retry(req *http.Request, attempt int, reason retry.Reason, wait time.Duration)
	// GaveUp is called when an attempt failed with reason and no further attempt will be made;
	// cause says why (a sentinel of package retry, or the context's error).
	GaveUp(req *http.Request, attempts int, reason retry.Reason, cause error)
}

// NopObserver implements Observer by doing nothing; embed it to implement only some methods.
type NopObserver struct{}

// Queued does nothing.
func (NopObserver) Queued(*http.Request, time.Duration) {}

// Throttled does nothing.
func (NopObserver) Throttled(*http.Request, string, time.Duration) {}

// Attempt does nothing.
func (NopObserver) Attempt(*http.Request, int) {}

// Retry does nothing.
func (NopObserver) Retry(*http.Request, int, retry.Reason, time.Duration) {}

// GaveUp does nothing.
func (NopObserver) GaveUp(*http.Request, int, retry.Reason, error) {}

// observers fans every event out to several Observers, in order.
type observers []Observer

func (os observers) Queued(req *http.Request, waited time.Duration) {
	for _, o := range os {
		o.Queued(req, waited)
	}
}

func (os observers) Throttled(req *http.Request, key string, waited time.Duration) {
	for _, o := range os {
		o.Throttled(req, key, waited)
	}
}

func (os observers) Attempt(req *http.Request, attempt int) {
	for _, o := range os {
		o.Attempt(req, attempt)
	}
}

func (os observers) Retry(req *http.Request, attempt int, reason retry.Reason, wait time.Duration) {
	for _, o := range os {
		o.Retry(req, attempt, reason, wait)
	}
}

func (os observers) GaveUp(req *http.Request, attempts int, reason retry.Reason, cause error) {
	for _, o := range os {
		o.GaveUp(req, attempts, reason, cause)
	}
}

// retryObserver adapts an Observer to package retry's Observer.
type retryObserver struct{ o Observer }

func (r retryObserver) Attempt(req *http.Request, attempt int) { r.o.Attempt(req, attempt) }

func (r retryObserver) Retry(req *http.Request, attempt int, reason retry.Reason, wait time.Duration) {
	r.o.Retry(req, attempt, reason, wait)
}

func (r retryObserver) GaveUp(req *http.Request, attempts int, reason retry.Reason, cause error) {
	r.o.GaveUp(req, attempts, reason, cause)
}
