package retry

import (
	"context"
	"io"
	"net/http"
	"time"
)

// ErrAttemptTimeout is the error of an attempt that obtained no response headers within its
// per-attempt timeout (WithAttemptTimeout, request.WithAttemptTimeout). It is a timeout (a net.Error
// whose Timeout is true), so the default classifier retries it, for a request that may be sent
// again (a POST without an Idempotency-Key may have been processed, and is not). It appears as an
// attempt's error in *Error, matchable with errors.Is.
var ErrAttemptTimeout error = attemptTimeout{}

type attemptTimeout struct{}

func (attemptTimeout) Error() string   { return "retry: attempt timed out before its response headers" }
func (attemptTimeout) Timeout() bool   { return true }
func (attemptTimeout) Temporary() bool { return true }

// sendAttempt sends one attempt through next. With a positive timeout the attempt runs under a
// context of its own, derived from req's, that is cancelled when the timeout passes before
// next.RoundTrip returns; the attempt then fails with ErrAttemptTimeout (a response that raced the
// timeout is closed: its body could not be read). Once the response headers are in, the timeout
// no longer applies: the attempt's context lives until the response body is closed. req is not
// modified; next sees a shallow copy carrying the attempt's context.
func sendAttempt(next http.RoundTripper, req *http.Request, timeout time.Duration) (*http.Response, error) {
	if timeout <= 0 {
		return next.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(timeout, func() { cancel(ErrAttemptTimeout) })
	resp, err := next.RoundTrip(req.WithContext(ctx))
	if !timer.Stop() { // the timeout passed first
		if resp != nil {
			drainAndClose(resp.Body)
		}
		cancel(ErrAttemptTimeout)
		if req.Context().Err() != nil {
			return nil, req.Context().Err() // the caller's context ended too: that is the error
		}
		return nil, ErrAttemptTimeout
	}
	if err != nil || resp == nil {
		cancel(nil)
		return resp, err
	}
	switch body := resp.Body.(type) {
	case nil:
		cancel(nil)
	case io.ReadWriteCloser:
		// A switched protocol (101) hands the connection over; it lives with the caller's context.
	default:
		resp.Body = &cancelOnClose{ReadCloser: body, cancel: cancel}
	}
	return resp, nil
}

// cancelOnClose releases an attempt's context when its response body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
