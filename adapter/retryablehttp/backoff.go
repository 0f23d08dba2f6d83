package retryablehttp

import (
	"math/rand/v2"
	"net/http"
	"time"

	hashicorp "github.com/hashicorp/go-retryablehttp"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/retry"
)

var _ hashicorp.Backoff = Backoff

// Backoff is a retryablehttp.Backoff with steady's rules: when resp carries Retry-After (any status;
// delay-seconds or an HTTP-date measured against resp's Date header), the wait is that delay plus a
// jitter of up to retry.DefaultRetryAfterJitter (10%) of it, never less, whatever min and max say.
// A Retry-After of 0, or a date gone by, names no wait: it is drawn as without one, so a server
// that says "now" and refuses again draws no retry storm. Otherwise it is drawn uniformly from [min, min(max, min·2^attemptNum)], with min and max the
// client's RetryWaitMin and RetryWaitMax and attemptNum counting retries from 0: exponential, with
// jitter so that clients that failed together do not return together.
// It is safe for concurrent use.
func Backoff(minWait, maxWait time.Duration, attemptNum int, resp *http.Response) time.Duration {
	if resp != nil {
		if ra, ok := ratelimitheader.RetryAfter(resp.Header, time.Now()); ok && ra > 0 {
			return retry.AddJitter(ra, retry.DefaultRetryAfterJitter)
		}
	}
	minWait = max(minWait, 0)
	maxWait = max(maxWait, minWait)
	ceiling := minWait
	for i := 0; i < attemptNum && ceiling < maxWait; i++ {
		if ceiling == 0 {
			break
		}
		if ceiling > maxWait/2 {
			ceiling = maxWait
		} else {
			ceiling *= 2
		}
	}
	if ceiling <= minWait {
		return minWait
	}
	return minWait + time.Duration(rand.Int64N(int64(ceiling-minWait)+1))
}
