package client

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/throttle"
)

// Option configures the stack built by New and NewTransport.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	base        http.RoundTripper
	limiter     func(key string) (throttle.Limiter, error)
	paceSet     bool
	keyFunc     func(*http.Request) string
	maxKeys     int
	maxInFlight int
	maxWaiting  int
	// maxWaitingSet tells WithMaxWaiting(0) (no line) from no option (the queue's default).
	maxWaitingSet bool
	maxWait       time.Duration
	maxWaitSet    bool
	retryOpts     []retry.Option
	breakerOpts   []breaker.Option
	breakerSet    bool
	observers     observers
	logger        *slog.Logger // WithLogger's last logger, for the learners
	// maxPause is the Throttle's bound on a Retry-After's pause, for the learners (set when the
	// stack is built, before any key's learner is made).
	maxPause    time.Duration
	maxPauseSet bool
	errs        []error
}

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...))
}

func validRate(r float64) bool { return r > 0 && !math.IsInf(r, 0) && !math.IsNaN(r) }

// WithTokenBucket paces every key (host, by default) at a known rate: ratePerSec requests per second
// on average with bursts of up to burst requests (a token bucket, package throttle). It replaces the
// default pace. ratePerSec must be positive and finite, burst at least 1.
func WithTokenBucket(ratePerSec float64, burst int) Option {
	return optionFunc(func(c *config) {
		if !validRate(ratePerSec) || burst < 1 {
			c.fail("WithTokenBucket(%v, %d): rate must be positive and finite, burst at least 1", ratePerSec, burst)
			return
		}
		c.paceSet = true
		c.limiter = func(string) (throttle.Limiter, error) { return throttle.NewTokenBucket(ratePerSec, burst) }
	})
}

// WithLeakyBucket paces every key at a known rate with even spacing: one request every 1/ratePerSec
// seconds, served in FIFO order, with at most backlog requests waiting per key (a further one fails
// with an error matching throttle.ErrBacklogFull). It replaces the default pace. ratePerSec must be
// positive and finite, backlog at least 0.
func WithLeakyBucket(ratePerSec float64, backlog int) Option {
	return optionFunc(func(c *config) {
		if !validRate(ratePerSec) || backlog < 0 {
			c.fail("WithLeakyBucket(%v, %d): rate must be positive and finite, backlog at least 0", ratePerSec, backlog)
			return
		}
		c.paceSet = true
		c.limiter = func(string) (throttle.Limiter, error) { return throttle.NewLeakyBucket(ratePerSec, backlog) }
	})
}

// WithWindowQuota paces every key with a known quota per window, used exactly: at most limit
// requests in any window (a client-side sliding log, throttle.NewWindowQuota), served in FIFO
// order. The first limit requests go at once, and each later one exactly one window after the one
// limit places before it. It replaces the default pace. limit must be at least 1, window positive
// and at most 366 days.
//
// Use it for an API whose documented limit is a quota per window that may be spent at any moment of
// the window (a fixed window or a sliding log on the server, "6,000 requests per minute"): it
// finishes a batch in window bursts, sooner than an even pace, and a single call never waits while
// quota is left. Use WithTokenBucket instead against a token bucket or a sliding window counter,
// which refuse a burst of the whole quota at a window boundary. It counts sends, not arrivals at
// the server; to leave slack for network jitter, pass a slightly longer window.
func WithWindowQuota(limit int, window time.Duration) Option {
	return optionFunc(func(c *config) {
		if _, err := throttle.NewWindowQuota(limit, window); err != nil { // one place decides what is valid
			c.fail("WithWindowQuota(%d, %v): limit must be at least 1, window positive and at most 366 days", limit, window)
			return
		}
		c.paceSet = true
		c.limiter = func(string) (throttle.Limiter, error) { return throttle.NewWindowQuota(limit, window) }
	})
}

// WithWindowCounter paces every key against a server's sliding window counter of limit requests
// per window whose windows are aligned to the Unix epoch (Cloudflare-style rate limiting, and
// testserver's sliding-window): it mirrors the server's rule exactly (throttle.NewWindowCounter),
// in FIFO order. The first limit requests go at once, and each later one as soon as the previous
// window's weight leaves room for it, limit-1 per window in the long run. It replaces the default
// pace. limit must be at least 1, window positive and at most 366 days.
//
// The windows are placed on the client's clock, so the server's and the client's clocks must
// agree to well within a window; and it counts sends, not arrivals at the server. To leave slack
// for network jitter and clock skew, pass a limit slightly below the server's, for example
// ⌊limit×(1-margin)⌋. Use WithWindowQuota instead against a fixed window or sliding log, and
// WithTokenBucket against a token bucket or a counter whose windows are not aligned to the epoch.
func WithWindowCounter(limit int, window time.Duration) Option {
	return optionFunc(func(c *config) {
		if _, err := throttle.NewWindowCounter(limit, window); err != nil { // one place decides what is valid
			c.fail("WithWindowCounter(%d, %v): limit must be at least 1, window positive and at most 366 days", limit, window)
			return
		}
		c.paceSet = true
		c.limiter = func(string) (throttle.Limiter, error) { return throttle.NewWindowCounter(limit, window) }
	})
}

// WithLimiter paces every key with the Limiter the factory makes for it on first use (see
// throttle.WithLimiter); a nil factory, or a factory that returns (nil, nil), leaves keys unpaced
// (only Retry-After pauses hold them back). It replaces the default pace.
func WithLimiter(factory func(key string) (throttle.Limiter, error)) Option {
	return optionFunc(func(c *config) {
		c.paceSet = true
		c.limiter = factory
	})
}

// WithKeyFunc sets what a request is paced and paused by: by default its URL's host and a short
// hash of its credential (see WithCredentialKey), or for example a tenant's name. Routes whose
// responses name their quota's bucket are paced by the bucket of the key (throttle.BucketKey). f is called for every attempt from many goroutines and must not modify
// the request. A nil f is an invalid option.
func WithKeyFunc(f func(*http.Request) string) Option {
	return optionFunc(func(c *config) {
		if f == nil {
			c.fail("WithKeyFunc(nil)")
			return
		}
		c.keyFunc = f
	})
}

// WithCredentialKey sets how the default key names a request's quota owner: the request's host
// followed by a short hash of the credential in k.Header (Authorization when ""), keyed by k.Salt
// when set (dialects.Keyer). By default the Authorization header is hashed without a salt, so two
// API keys calling one host are paced apart and no secret appears in a key, a log line or a
// metric. Use it for an API that takes its key in a header of its own:
// WithCredentialKey(dialects.Keyer{Header: "X-Api-Key"}). It replaces WithKeyFunc (the last of
// the two given wins). Like the default, it hashes a credential once, not on every request
// (dialects.Keyer.Func).
func WithCredentialKey(k dialects.Keyer) Option {
	return optionFunc(func(c *config) { c.keyFunc = k.Func() })
}

// WithMaxKeys bounds how many keys the throttle keeps state for (default throttle.DefaultMaxKeys);
// see throttle.WithMaxKeys. n must be at least 1.
func WithMaxKeys(n int) Option {
	return optionFunc(func(c *config) {
		if n < 1 {
			c.fail("WithMaxKeys(%d): must be at least 1", n)
			return
		}
		c.maxKeys = n
	})
}

// WithMaxInFlight puts a FIFO queue (package queue) in front of the stack that lets at most n
// requests be in flight at once (from the first attempt until the response body is closed); the
// others wait in line in arrival order, within their priority (queue.WithPriority on the request's
// context). By default there is no queue and no limit. n must be at least 1.
func WithMaxInFlight(n int) Option {
	return optionFunc(func(c *config) {
		if n < 1 {
			c.fail("WithMaxInFlight(%d): must be at least 1", n)
			return
		}
		c.maxInFlight = n
	})
}

// WithMaxWaiting bounds the queue's waiting line (default queue.DefaultMaxWaiting); a request that
// finds it full fails at once with an error matching queue.ErrQueueFull. It has effect only with
// WithMaxInFlight. n must be at least 0.
func WithMaxWaiting(n int) Option {
	return optionFunc(func(c *config) {
		if n < 0 {
			c.fail("WithMaxWaiting(%d): must be at least 0", n)
			return
		}
		c.maxWaiting, c.maxWaitingSet = n, true
	})
}

// WithRetry passes options to the retry layer (package retry): attempts, backoff, statuses,
// budget, idempotency keys. Without it the retry layer runs with package retry's defaults. Options
// from several WithRetry calls add up, in order.
func WithRetry(opts ...retry.Option) Option {
	return optionFunc(func(c *config) { c.retryOpts = append(c.retryOpts, opts...) })
}

// WithObserver adds an Observer that is told of every wait, attempt, retry and give-up. Several
// observers are called in the order they were added. A nil o is ignored.
func WithObserver(o Observer) Option {
	return optionFunc(func(c *config) {
		if o != nil {
			c.observers = append(c.observers, o)
		}
	})
}

// WithLogger logs the stack's events to l: waits and attempts at Debug, retries at Info, giving up
// at Warn, each with the method and the redacted URL. With the default pace or WithLearner, each
// key's learner also logs its transitions (a belief that changed, the strategy in charge, why) at
// Debug, as "KEY: DETAIL" with the strategy and state as attributes. A nil l is
// ignored; given more than once, every logger gets the stack's events and the last one the
// learner's.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l != nil {
			c.observers = append(c.observers, slogObserver{l})
			c.logger = l
		}
	})
}

// WithBase sets the RoundTripper that New's client sends attempts through (default
// http.DefaultTransport). NewTransport takes its base as a parameter instead; there, WithBase
// overrides it when given.
func WithBase(rt http.RoundTripper) Option {
	return optionFunc(func(c *config) {
		if rt != nil {
			c.base = rt
		}
	})
}

// DefaultMaxWait is how long, at most, the stack lets a request wait for its key's pause or pace
// when WithMaxWait is not given: the same as the longest Retry-After the retry layer waits out by
// default (retry.DefaultMaxRetryAfter).
const DefaultMaxWait = retry.DefaultMaxRetryAfter

// WithMaxWait bounds how long a request waits before it is sent, for a pause of its key (a
// server's Retry-After seen by any request to the key) or for the key's pace (a slow learned or
// known rate; a learned pace is judged by the rate the server allows the key, not by the share of
// a declared quota the learner leaves to other clients on it): a longer predicted wait fails the
// request at once with an error matching throttle.ErrWaitTooLong (*throttle.WaitTooLongError says
// how long and why), instead of leaving the caller blocked without a word. The default is DefaultMaxWait; 0 waits as long as it takes
// (bounded only by the request's context). d must not be negative.
func WithMaxWait(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d < 0 {
			c.fail("WithMaxWait(%v): must not be negative", d)
			return
		}
		c.maxWait = d
		c.maxWaitSet = true
	})
}

// WithBreaker adds a circuit breaker per key (package breaker) between the retry layer and the
// throttle: queue -> retry -> breaker -> throttle -> base. It counts every attempt's outcome (5xx
// and transport errors are failures), opens a key's circuit when they fail too often, and then
// holds the key's requests back until a probe finds the server working again (breaker.Pause, the
// default: nothing is lost) or fails them at once with an error matching breaker.ErrCircuitOpen
// (breaker.WithMode(breaker.FailFast)). Its key is the throttle's (WithKeyFunc, or the host) unless
// opts set breaker.WithKeyFunc. By default there is no breaker. Options from several WithBreaker
// calls add up, in order; invalid ones make the stack invalid (see Validate).
func WithBreaker(opts ...breaker.Option) Option {
	return optionFunc(func(c *config) {
		c.breakerSet = true
		c.breakerOpts = append(c.breakerOpts, opts...)
	})
}
