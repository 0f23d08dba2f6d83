// Package retry retries HTTP requests without making things worse: it is an http.RoundTripper that
// loops over attempts of one logical request, sending each attempt through the next RoundTripper
// (in steady's stack, the throttle, which paces every attempt and pauses a host on Retry-After).
//
// # Which failures
//
// By default an attempt failed in a way worth retrying when its response has status 429, 502, 503
// or 504 (not 501, not any other 4xx or 5xx), or when it obtained no response because of a network
// failure: connection refused, reset or aborted, EOF before a response, a timeout of the transport
// (see RetryableError). A cancelled or expired context of the caller is never retried. The statuses
// are configurable (WithStatuses) and the whole decision can be replaced (WithClassifier).
//
// # Which requests
//
// GET, HEAD, OPTIONS, TRACE, PUT and DELETE are idempotent and are retried freely. POST, PATCH and
// every other method are retried only when sending them twice is harmless: the request carries an
// Idempotency-Key header (WithIdempotencyKeys adds one), or the response proves the server did not
// process it (429, a 503 with a valid Retry-After, or a 403 its API's dialect reads as a rate
// limit's refusal: GitHub's with its quota used up or a secondary limit, Salesforce's
// REQUEST_LIMIT_EXCEEDED), or the error proves the request never left the client (a failed dial,
// an unresolved host: see NotSent). A POST that failed otherwise at transport
// level without a key is never sent twice: the server may have processed it.
//
// A request body is replayed through req.GetBody (set by http.NewRequest for bytes, strings and
// their readers). A request that has a body but no GetBody gets exactly one attempt: the body is
// never copied behind the caller's back.
//
// # When
//
// Without a server signal the wait before retry n is drawn uniformly from [0, min(max, base·2^(n-1))]
// ("full jitter" over the exponential schedule of github.com/cenkalti/backoff/v4). When the response
// carries Retry-After (delay-seconds or an HTTP-date, the date measured against the response's Date
// header to cancel clock skew and rounded up by the second its instant may lie beyond it), the wait
// is exactly that plus a jitter that only adds (by default up to 10%): a retry never arrives before
// the server asked. A Retry-After of 0, or a date gone by, names no time: the backoff decides, so a
// server that asks for no wait and refuses again draws no retry storm. A Retry-After beyond
// WithMaxRetryAfter, or one that would pass the request context's deadline, is not waited out: the
// response is returned at once.
//
// # Timeouts
//
// The request's context deadline (http.Client.Timeout becomes one) bounds everything: a retry whose
// wait would end after it is not made. WithMaxElapsed bounds the attempts of one request together.
// WithAttemptTimeout (or request.WithAttemptTimeout for one request) gives each attempt a time to
// obtain its response headers; an attempt that runs out fails with ErrAttemptTimeout and is retried
// like a transport timeout. docs/timeouts.md describes how they bound the queue, the throttle's
// waits and the retries of steady's stack.
//
// # Per request
//
// A request's context may carry its own maximum number of attempts and per-attempt timeout (package
// request: request.WithAttempts, request.WithAttemptTimeout); they replace the Transport's for that
// request.
//
// A per-host retry budget (see Budget, in the spirit of gRPC retry throttling) stops retries when
// they become a large share of the traffic, so an outage cannot turn into a retry storm.
//
// # Results
//
// RoundTrip follows the net/http RoundTripper contract. A response, retried or not, is returned with
// a nil error, also when attempts ran out: the caller gets the last response with its body intact.
// An error is returned only when no response is returned: *Error carries the attempt history, why
// retrying stopped (a sentinel such as ErrAttemptsExhausted) and the last error; errors.Is and
// errors.As see through it to both. The caller's request is never modified: retries send clones.
package retry
