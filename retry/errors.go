package retry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Why retrying stopped. They appear as (*Error).Cause, are matchable with errors.Is on the error
// RoundTrip returns, and are passed to Observer.GaveUp.
var (
	// ErrAttemptsExhausted: the maximum number of attempts (WithMaxAttempts) was made.
	ErrAttemptsExhausted = errors.New("retry: attempts exhausted")
	// ErrBudgetExhausted: the host's retry budget (see Budget) allows no retry now.
	ErrBudgetExhausted = errors.New("retry: retry budget exhausted")
	// ErrNotReplayable: the request has a body but no GetBody, so it cannot be sent again.
	ErrNotReplayable = errors.New("retry: request body cannot be replayed (no GetBody)")
	// ErrNotIdempotent: the request's method is not idempotent, it carries no Idempotency-Key, and
	// the outcome does not prove the server left it unprocessed.
	ErrNotIdempotent = errors.New("retry: request is not idempotent")
	// ErrRetryAfterTooLong: the server's Retry-After is longer than WithMaxRetryAfter allows.
	ErrRetryAfterTooLong = errors.New("retry: Retry-After exceeds the maximum")
	// ErrMaxElapsed: waiting for the next attempt would pass the total time WithMaxElapsed allows.
	ErrMaxElapsed = errors.New("retry: maximum elapsed time reached")
	// ErrWouldExceedDeadline: waiting for the next attempt would pass the request context's
	// deadline. It also matches context.DeadlineExceeded.
	ErrWouldExceedDeadline error = wouldExceedDeadline{}
	// ErrInvalidOption: an Option or constructor was given a value it cannot use. Errors from
	// NewTransport and NewBudget wrap it.
	ErrInvalidOption = errors.New("retry: invalid option")
	// ErrNoResponse: the next RoundTripper broke its contract and returned neither a response nor
	// an error. The Transport reports it as that attempt's error (it is not retried).
	ErrNoResponse = errors.New("retry: next RoundTripper returned no response and no error")
	// ErrNilRequest: RoundTrip was called with a nil request.
	ErrNilRequest = errors.New("retry: nil request")
)

type wouldExceedDeadline struct{}

func (wouldExceedDeadline) Error() string {
	return "retry: next attempt would pass the context deadline"
}

// Is makes ErrWouldExceedDeadline match context.DeadlineExceeded.
func (wouldExceedDeadline) Is(target error) bool { return target == context.DeadlineExceeded }

// Attempt records one attempt of a logical request.
type Attempt struct {
	// Status is the response's status code, 0 when the attempt obtained no response.
	Status int
	// Err is the transport error of an attempt that obtained no response, else nil.
	Err error
	// Wait is how long RoundTrip waited after this attempt before the next one; 0 for the last.
	Wait time.Duration
}

// Error is returned by RoundTrip when it returns no response after retrying was considered: every
// attempt failed without a response, or the context ended while waiting for the next attempt, or a
// retry attempt failed with an error that is not retried. (An error of a single attempt that is not
// worth retrying, such as a TLS verification failure, is returned unchanged.)
//
// errors.Is and errors.As see both Err and Cause.
type Error struct {
	// Method and URL of the logical request.
	Method string
	URL    string
	// Attempts is the history, one entry per attempt, in order.
	Attempts []Attempt
	// Err is the last error: the last attempt's transport error, or the context's error when the
	// context ended during a wait.
	Err error
	// Cause says why no further attempt was made: one of the Err* sentinels of this package, or
	// nil when Err alone explains it (a cancelled context, an error that is not retried).
	Cause error
}

// Error describes the logical request, the number of attempts, the cause and the last error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "retry: %s %s: %d attempt", e.Method, e.URL, len(e.Attempts))
	if len(e.Attempts) != 1 {
		b.WriteByte('s')
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, ", gave up (%s)", strings.TrimPrefix(e.Cause.Error(), "retry: "))
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns Err and Cause (those that are not nil), so errors.Is(err, syscall.ECONNREFUSED)
// and errors.Is(err, retry.ErrAttemptsExhausted) both work.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

func newError(req *http.Request, hist []Attempt, err, cause error) *Error {
	return &Error{Method: req.Method, URL: redactedURL(req), Attempts: hist, Err: err, Cause: cause}
}

// redactedURL is the request URL without its password.
func redactedURL(req *http.Request) string {
	if req.URL == nil {
		return ""
	}
	return req.URL.Redacted()
}
