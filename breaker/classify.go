package breaker

import (
	"context"
	"errors"
	"net/http"

	"github.com/steadyhttp/steady/retry"
)

// DefaultClassifier is the default Classifier: a transport error that the caller's context caused
// is Ignored, one for which retry.RetryableError reports true (refused, reset, EOF, timeouts: the
// server or the path to it failed) is a Failure, and any other error (a local refusal such as the
// throttle's ErrWaitTooLong, a TLS configuration error) is Ignored; a response with a 5xx status
// is a Failure, any other response (429 included) a Success.
func DefaultClassifier(resp *http.Response, err error) Outcome {
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !retry.RetryableError(err) {
			return Ignored
		}
		return Failure
	}
	if resp != nil && resp.StatusCode >= 500 && resp.StatusCode <= 599 {
		return Failure
	}
	return Success
}
