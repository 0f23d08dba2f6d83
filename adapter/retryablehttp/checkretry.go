package retryablehttp

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	hashicorp "github.com/hashicorp/go-retryablehttp"

	"github.com/steadyhttp/steady/internal/errorsas"
	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/retry"
)

var _ hashicorp.CheckRetry = CheckRetry

// CheckRetry is a retryablehttp.CheckRetry with steady's rules (see the package documentation): it
// reports whether the attempt that obtained resp, or failed with err, should be retried. It returns
// ctx's error when ctx has ended, and otherwise a nil error. It is safe for concurrent use.
func CheckRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil {
		if !retry.RetryableError(err) {
			return false, nil
		}
		if retry.NotSent(err) { // never left the client: safe whatever the method
			return true, nil
		}
		method, ok := methodOf(err)
		return ok && retry.IdempotentMethod(method), nil
	}
	if !retry.DefaultClassifier(resp, nil) {
		return false, nil
	}
	now := time.Now()
	ra, hasRA := ratelimitheader.RetryAfter(resp.Header, now)
	req := resp.Request
	if req == nil { // the method is unknown: only the response's proof counts
		req = &http.Request{Method: http.MethodPost}
	}
	if !retry.MaySendAgain(req, resp, hasRA) {
		return false, nil
	}
	if hasRA {
		if ra > retry.DefaultMaxRetryAfter {
			return false, nil
		}
		if deadline, ok := ctx.Deadline(); ok && !now.Add(ra).Before(deadline) {
			return false, nil
		}
	}
	return true, nil
}

// methodOf recovers the request method from the *url.Error that http.Client returns: its Op is the
// method with only its first letter in upper case ("Get", "Post").
func methodOf(err error) (string, bool) {
	uerr, ok := errorsas.AsType[*url.Error](err)
	if !ok || uerr.Op == "" {
		return "", false
	}
	return strings.ToUpper(uerr.Op), true
}
