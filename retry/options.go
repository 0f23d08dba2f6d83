package retry

import (
	"fmt"
	"math"
	"time"

	"github.com/steadyhttp/steady/dialects"
)

// Defaults of a Transport; each Option documents the one it changes.
const (
	DefaultMaxAttempts      = 5
	DefaultBaseDelay        = 200 * time.Millisecond
	DefaultMaxDelay         = 30 * time.Second
	DefaultMaxElapsed       = 2 * time.Minute
	DefaultMaxRetryAfter    = 60 * time.Second
	DefaultRetryAfterJitter = 0.1
)

// An Option configures a Transport in NewTransport.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	maxAttempts      int
	baseDelay        time.Duration
	maxDelay         time.Duration
	maxElapsed       time.Duration
	maxRetryAfter    time.Duration
	retryAfterJitter float64
	statuses         statusSet
	classifier       Classifier
	dialects         *dialects.Reader
	budget           *Budget
	budgetSet        bool
	observer         Observer
	idempotencyKeys  bool
	attemptTimeout   time.Duration
}

func defaultConfig() config {
	return config{
		maxAttempts:      DefaultMaxAttempts,
		baseDelay:        DefaultBaseDelay,
		maxDelay:         DefaultMaxDelay,
		maxElapsed:       DefaultMaxElapsed,
		maxRetryAfter:    DefaultMaxRetryAfter,
		retryAfterJitter: DefaultRetryAfterJitter,
		statuses:         defaultStatusSet,
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

// WithMaxAttempts sets the maximum number of attempts per logical request, the first one included
// (default DefaultMaxAttempts, 5). 1 disables retrying. n must be at least 1.
func WithMaxAttempts(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return invalid("WithMaxAttempts(%d): must be at least 1", n)
		}
		c.maxAttempts = n
		return nil
	})
}

// WithBaseDelay sets the first interval of the exponential schedule (default DefaultBaseDelay,
// 200ms): without Retry-After, the wait before retry n is drawn uniformly from
// [0, min(maxDelay, base·2^(n-1))]. d must be above 0.
func WithBaseDelay(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return invalid("WithBaseDelay(%v): must be above 0", d)
		}
		c.baseDelay = d
		return nil
	})
}

// WithMaxDelay caps the exponential schedule (default DefaultMaxDelay, 30s). It does not cap a
// server's Retry-After (see WithMaxRetryAfter). d must be at least the base delay.
func WithMaxDelay(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return invalid("WithMaxDelay(%v): must be above 0", d)
		}
		c.maxDelay = d
		return nil
	})
}

// WithMaxElapsed bounds the total time of one logical request (default DefaultMaxElapsed, 2m): a
// retry whose wait would end more than d after the first attempt started is not made. 0 removes the
// bound (the context's deadline still applies); d must not be negative.
func WithMaxElapsed(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return invalid("WithMaxElapsed(%v): must not be negative", d)
		}
		c.maxElapsed = d
		return nil
	})
}

// WithMaxRetryAfter sets the longest Retry-After the Transport waits out (default
// DefaultMaxRetryAfter, 60s). A response asking for a longer wait is returned to the caller at
// once, as is one whose wait would pass the request context's deadline. 0 means a response with a
// positive Retry-After is never retried; d must not be negative.
func WithMaxRetryAfter(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return invalid("WithMaxRetryAfter(%v): must not be negative", d)
		}
		c.maxRetryAfter = d
		return nil
	})
}

// WithRetryAfterJitter sets the jitter added on top of a server's Retry-After, as a fraction of it
// (default DefaultRetryAfterJitter, 0.1): the wait is drawn uniformly from
// [RetryAfter, RetryAfter·(1+f)], so clients told the same instant do not all return at once, yet
// none returns early. 0 waits exactly the Retry-After. f must be between 0 and 1.
func WithRetryAfterJitter(f float64) Option {
	return optionFunc(func(c *config) error {
		if math.IsNaN(f) || f < 0 || f > 1 {
			return invalid("WithRetryAfterJitter(%v): must be between 0 and 1", f)
		}
		c.retryAfterJitter = f
		return nil
	})
}

// WithDialects reads failed responses (status 400 or more) with r, a Reader with user dialects or
// a dialect forced for a host, instead of dialects.Read's recognition of the built-in dialects. The
// reading decides whether a response is a throttle (retried, after the wait its dialect asks for)
// and whether the server forbids or allows a retry. A nil r keeps the default.
func WithDialects(r *dialects.Reader) Option {
	return optionFunc(func(c *config) error { c.dialects = r; return nil })
}

// WithStatuses sets the response statuses the default classifier retries (default
// DefaultStatuses: 429, 502, 503, 504). No codes means no status is retried, only transport
// errors. Each code must be between 100 and 599. It has no effect together with WithClassifier.
func WithStatuses(codes ...int) Option {
	return optionFunc(func(c *config) error {
		for _, code := range codes {
			if !validStatus(code) {
				return invalid("WithStatuses: %d is not an HTTP status code", code)
			}
		}
		c.statuses = newStatusSet(codes)
		return nil
	})
}

// WithClassifier replaces the decision of which outcomes are failures worth retrying (default:
// WithStatuses' statuses, and transport errors for which RetryableError reports true). The rules
// on which requests may be sent again, the budget and the limits still apply. cl must not be nil.
func WithClassifier(cl Classifier) Option {
	return optionFunc(func(c *config) error {
		if cl == nil {
			return invalid("WithClassifier(nil)")
		}
		c.classifier = cl
		return nil
	})
}

// WithBudget sets the retry budget (default: a Budget of its own per Transport, with
// DefaultBudgetTokens and DefaultBudgetRatio). A Budget may be shared by several Transports. nil
// disables the budget: only the other limits bound retries.
//
// A retry that waits out a positive Retry-After does not spend from the budget: the server, not
// the client, chose when it comes. Retries the client schedules itself (exponential backoff after
// 502/503/504, errors, or a Retry-After of 0) do.
func WithBudget(b *Budget) Option {
	return optionFunc(func(c *config) error {
		c.budget, c.budgetSet = b, true
		return nil
	})
}

// WithObserver sets an Observer told of every attempt, retry and give-up (default: none). nil
// removes it.
func WithObserver(o Observer) Option {
	return optionFunc(func(c *config) error {
		switch {
		case o == nil:
		case c.observer == nil:
			c.observer = o
		default:
			c.observer = observers{c.observer, o}
		}
		return nil
	})
}

// WithIdempotencyKeys makes the Transport add an Idempotency-Key header with a fresh random UUID to
// each logical request whose method is not idempotent (POST, PATCH, ...) and that has none; the
// same key is sent on every attempt of that request, so such requests become retryable after
// transport errors too. A key set by the caller is never replaced. Default: off. When on, such a
// request is cloned for its first attempt too (to add the header), which costs a few allocations.
func WithIdempotencyKeys() Option {
	return optionFunc(func(c *config) error {
		c.idempotencyKeys = true
		return nil
	})
}

// WithAttemptTimeout gives each attempt at most d to obtain its response headers (default 0: no
// per-attempt timeout, only the request's context and WithMaxElapsed bound it). An attempt that runs
// out is abandoned and fails with ErrAttemptTimeout, which is retried like a transport timeout. The
// time counts from when the attempt leaves this layer, so it includes the attempt's wait in the
// layers below (in steady's stack, the throttle's pause and pace: keep d above the waits
// client.WithMaxWait allows, or bound those with it); it does not include the backoff before the
// attempt, nor reading the response body, which the request's context bounds. A request can set
// its own with request.WithAttemptTimeout. d must not be negative.
func WithAttemptTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return invalid("WithAttemptTimeout(%v): must not be negative", d)
		}
		c.attemptTimeout = d
		return nil
	})
}
