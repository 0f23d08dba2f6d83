// Package client assembles steady's RoundTripper stack, so that an ordinary *http.Client calls a
// rate-limited API at the pace it allows, in order, and recovers from throttling without losing or
// duplicating work:
//
//	http.Client.Do
//	  -> queue     wait for a place (FIFO, bounded), only when WithMaxInFlight is set
//	  -> retry     loop over attempts (package retry)
//	       -> breaker    only with WithBreaker: hold back or refuse a key whose circuit is open
//	       -> throttle   wait for permission for this host/key, every attempt (package throttle)
//	       -> base       http.DefaultTransport or yours
//	       <- throttle   Retry-After pauses the whole key; a learning limiter observes the response
//	     <- retry    done, or drain and close the body, back off (never below Retry-After), again
//	  <- queue     release the place when the response body is closed
//
// With no options the stack is safe and useful: retries with package retry's defaults, honours
// Retry-After with a per-host pause, and paces each host just under the rate it learns from the
// server's responses (throttle/learn: rate-limit headers when the server sends them, 429s when it
// does not; the methods LearnedRate and LearnedLimit of the *Transport under the returned client,
// c.Transport.(*client.Transport), report it for a key as its KeyOf(req) gives it: by default the
// URL's host (with its port) and a short hash of the Authorization header). Options set a known pace per host instead (WithTokenBucket,
// WithLeakyBucket, WithWindowQuota for a quota per window usable at any time within it,
// WithWindowCounter for a sliding window counter on epoch-aligned windows, WithLimiter, or
// WithoutPace for none), queue limits (WithMaxInFlight,
// WithMaxWaiting), retry knobs (WithRetry), a circuit breaker (WithBreaker), and an Observer or slog
// logger for metrics and logs (an Observer that also implements AttemptObserver sees each attempt
// start and end with a context of its own: the hook of the OpenTelemetry module otelsteady). A request's context can carry its own settings (package request).
//
// Invalid options never panic: Validate reports them, and a Transport built from them fails every
// request with an error matching ErrInvalidOption (closing the request body, sending nothing).
package client
