package throttle

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors for invalid parameters, returned (wrapped, with the offending value) by the constructors
// and New. They are matchable with errors.Is.
var (
	// ErrInvalidRate reports a rate that is not a positive finite number of requests per second
	// (zero, negative, NaN, Inf, or too fast to express as a whole number of nanoseconds).
	ErrInvalidRate = errors.New("throttle: rate must be a positive, finite number of requests per second")
	// ErrInvalidBurst reports a token bucket burst below 1.
	ErrInvalidBurst = errors.New("throttle: burst must be at least 1")
	// ErrInvalidBacklog reports a negative leaky bucket backlog.
	ErrInvalidBacklog = errors.New("throttle: backlog must not be negative")
	// ErrInvalidOption reports an Option with an unusable value (a nil key function, a maximum
	// number of keys below 1).
	ErrInvalidOption = errors.New("throttle: invalid option")
)

// ErrBacklogFull is the sentinel every *BacklogFullError matches with errors.Is.
var ErrBacklogFull = errors.New("throttle: backlog full")

// ErrTooManyKeys is returned when a request needs a partition for a new key while the Throttle
// already holds its maximum number of keys (WithMaxKeys) and every one of them has a request
// waiting or in flight, so none can be evicted. The request's body is closed.
var ErrTooManyKeys = errors.New("throttle: too many keys busy at once")

// ErrOtherBucket is the error a Learner's Observe receives, with a nil response, for an attempt it
// paced whose answer belongs to another quota: the response named a bucket (Discord's
// X-RateLimit-Bucket, GitHub's x-ratelimit-resource) other than the one the limiter learns (see
// routes.go: a bucket's own, or, for the key's limiter, the API's primary quota when it has one:
// GitHub's core). It carries no evidence about this limiter's quota, but the attempt is answered
// (it is no longer in flight); a limiter that measures round trips may still count its own.
var ErrOtherBucket = errors.New("throttle: the answer is of another bucket's quota")

// ErrNilRequestURL is returned by the Transport for a request without a URL; its body is closed.
var ErrNilRequestURL = errors.New("throttle: request has no URL")

// BacklogFullError is returned by a leaky bucket that refuses a request because Backlog requests
// are already scheduled and waiting. It matches ErrBacklogFull with errors.Is.
type BacklogFullError struct {
	// Backlog is the limiter's backlog capacity.
	Backlog int
	// Wait is how long the request would have waited had the backlog had room.
	Wait time.Duration
}

// Error describes the refusal.
func (e *BacklogFullError) Error() string {
	return fmt.Sprintf("throttle: backlog full: %d requests already waiting (this one would wait %v)", e.Backlog, e.Wait)
}

// Is reports whether target is ErrBacklogFull.
func (e *BacklogFullError) Is(target error) bool { return target == ErrBacklogFull }

// WouldExceedDeadlineError is returned by a wait that refused up front because the predicted wait
// ends after the context's deadline. Whatever the wait had reserved has been given back. It
// matches context.DeadlineExceeded with errors.Is, like the error the wait would have ended with.
type WouldExceedDeadlineError struct {
	// Wait is the predicted wait that did not fit before the deadline.
	Wait time.Duration
}

// Error describes the refusal.
func (e *WouldExceedDeadlineError) Error() string {
	return fmt.Sprintf("throttle: waiting %v would exceed the context deadline", e.Wait)
}

// Is reports whether target is context.DeadlineExceeded.
func (e *WouldExceedDeadlineError) Is(target error) bool { return target == context.DeadlineExceeded }

// Timeout reports true: the error is a timeout, as context.DeadlineExceeded is.
func (e *WouldExceedDeadlineError) Timeout() bool { return true }

// ErrWaitTooLong is the sentinel every *WaitTooLongError matches with errors.Is.
var ErrWaitTooLong = errors.New("throttle: wait too long")

// WaitTooLongError is returned by a Throttle's wait that refused up front because the predicted
// wait, for a pause of the key (a server's Retry-After) or for the key's limiter, is longer than the
// Throttle's maximum (WithMaxWait). Whatever the wait had reserved has been given back and nothing
// was sent. It matches ErrWaitTooLong with errors.Is.
type WaitTooLongError struct {
	// Key is the key the request waited for.
	Key string
	// Wait is the predicted wait.
	Wait time.Duration
	// Max is the Throttle's maximum wait.
	Max time.Duration
	// Paused reports whether the wait was a pause of the key (a server's Retry-After, or Pause)
	// rather than the key's pace.
	Paused bool
}

// Error describes the refusal.
func (e *WaitTooLongError) Error() string {
	what := "pace"
	if e.Paused {
		what = "pause (the server's Retry-After)"
	}
	// To the millisecond, and to the second from a minute on: "59m59.999s" for an hour's pause
	// read a moment after it began says no more than "1h0m0s".
	wait := e.Wait.Round(time.Millisecond)
	if e.Wait >= time.Minute {
		wait = e.Wait.Round(time.Second)
	}
	return fmt.Sprintf("throttle: %q would wait %v for its %s, longer than the maximum wait of %v", e.Key, wait, what, e.Max)
}

// Is reports whether target is ErrWaitTooLong.
func (e *WaitTooLongError) Is(target error) bool { return target == ErrWaitTooLong }
