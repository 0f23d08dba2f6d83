package retry

import (
	"fmt"
	"net/http"
	"time"
)

// Observer is told what the Transport does with each logical request, for metrics and logs.
// Its methods are called synchronously on the goroutine of RoundTrip, so they must be quick and
// safe for concurrent use; they must not modify req nor read or close a response body.
// Embed NopObserver to implement only some of them.
type Observer interface {
	// Attempt is called before each attempt is sent; attempt counts from 1. req is the request
	// sent for that attempt (the caller's, or a clone for a retry).
	Attempt(req *http.Request, attempt int)
	// Retry is called when attempt failed with reason and the Transport will send another attempt
	// after waiting wait.
	Retry(req *http.Request, attempt int, reason Reason, wait time.Duration)
	// GaveUp is called when attempt failed with reason and no further attempt will be made; cause
	// says why (ErrAttemptsExhausted, ErrBudgetExhausted, ... or the context's error when it ended
	// while waiting). It is not called for an outcome that is not a failure.
	GaveUp(req *http.Request, attempts int, reason Reason, cause error)
}

// NopObserver is an Observer that does nothing; embed it to implement only some methods.
type NopObserver struct{}

// Attempt does nothing.
func (NopObserver) Attempt(*http.Request, int) {}

// Retry does nothing.
func (NopObserver) Retry(*http.Request, int, Reason, time.Duration) {}

// GaveUp does nothing.
func (NopObserver) GaveUp(*http.Request, int, Reason, error) {}

// Reason describes the failed outcome of one attempt.
type Reason struct {
	// Status is the response's status code; 0 when the attempt obtained no response.
	Status int
	// Err is the transport error when the attempt obtained no response.
	Err error
	// RetryAfter is the delay the response's Retry-After asked for (skew-corrected), valid when
	// HasRetryAfter is true.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// Throttled reports that the response's API says it is its rate limiter's refusal, as its
	// dialect reads it (package dialects): a 429, GitHub's 403 with its quota used up or with a
	// secondary limit, or a status the Reader was told means a throttle. A 403 so read was not
	// processed, so any method may be sent again after it (see the package doc).
	Throttled bool

	// retryAfterGrain is how much RetryAfter may overstate the wait meant (an HTTP-date's second,
	// dialects.Reading.RetryAfterGrain): WithMaxRetryAfter's bound is compared with RetryAfter
	// less it.
	retryAfterGrain time.Duration
}

// String describes the reason, e.g. "status 429 (Retry-After 2s)" or "error: EOF".
func (r Reason) String() string {
	if r.Err != nil {
		return "error: " + r.Err.Error()
	}
	if r.HasRetryAfter {
		return fmt.Sprintf("status %d (Retry-After %v)", r.Status, r.RetryAfter)
	}
	return fmt.Sprintf("status %d", r.Status)
}

// observers calls several Observers in order (WithObserver given more than once).
type observers []Observer

func (os observers) Attempt(req *http.Request, attempt int) {
	for _, o := range os {
		o.Attempt(req, attempt)
	}
}

func (os observers) Retry(req *http.Request, attempt int, reason Reason, wait time.Duration) {
	for _, o := range os {
		o.Retry(req, attempt, reason, wait)
	}
}

func (os observers) GaveUp(req *http.Request, attempts int, reason Reason, cause error) {
	for _, o := range os {
		o.GaveUp(req, attempts, reason, cause)
	}
}
