// Package retryablehttp brings steady's retry rules to users of github.com/hashicorp/go-retryablehttp:
// set two fields of a retryablehttp.Client and it retries what steady retries, and waits as steady
// waits:
//
//	c := retryablehttp.NewClient()
//	c.CheckRetry = steadyretry.CheckRetry
//	c.Backoff = steadyretry.Backoff
//
// (with this package imported as steadyretry, say, beside hashicorp's). The rules are those of
// package github.com/steadyhttp/steady/retry with its defaults:
//
//   - statuses 429, 502, 503 and 504 are retried, not 501 nor any other 4xx or 5xx; transport errors
//     that obtained no response (refused, reset, EOF, timeouts) are, TLS failures and unknown hosts
//     are not; a cancelled or expired context stops at once;
//   - GET, HEAD, OPTIONS, TRACE, PUT and DELETE are retried freely; POST, PATCH and other methods
//     only after a 429 or a 503 with Retry-After (the server did not process them), or when the
//     request carries an Idempotency-Key;
//   - Retry-After (delay-seconds or an HTTP-date, measured against the response's Date header to
//     cancel clock skew) is honoured exactly: the wait is never shorter, jitter only adds (up to
//     10%); a Retry-After above 60s, or one that would pass the context's deadline, is not waited
//     out: the response is returned at once;
//   - otherwise the wait is exponential with jitter between the client's RetryWaitMin and
//     RetryWaitMax.
//
// What the two hooks cannot see: CheckRetry is given no request when no response came back, so it
// takes the method from the *url.Error that http.Client returns, and a POST or PATCH that failed at
// transport level is never retried, even with an Idempotency-Key, unless the error proves it was
// never sent (a failed dial: retry.NotSent). steady's retry budget needs state
// across requests and is not part of these hooks. For both, use retry.Transport itself.
//
// To get the last response rather than an error when attempts run out, as steady does, also set
// c.ErrorHandler = retryablehttp.PassthroughErrorHandler.
package retryablehttp
