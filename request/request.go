package request

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrInvalid is matched (errors.Is) by the error a layer of the stack fails a request with when one
// of its settings was given a value it cannot use (see Settings.Err).
var ErrInvalid = errors.New("request: invalid per-request setting")

// Settings are the per-request settings of a context. The zero value holds none. A Settings is a
// value: reading it is safe for concurrent use.
type Settings struct {
	// v points at the values stored in the context, which are never modified (nil: none), so that
	// a Settings is one word to copy: every layer of the stack reads one per request.
	v *values
}

// values are the settings themselves.
type values struct {
	attempts       int
	maxWait        time.Duration
	attemptTimeout time.Duration
	key            string
	cost           int
	set            fields
	err            error // the invalid settings, joined; nil when all are valid
}

// fields records which settings were given.
type fields uint8

const (
	fieldAttempts fields = 1 << iota
	fieldMaxWait
	fieldAttemptTimeout
	fieldKey
	fieldCost
)

type settingsKey struct{}

// From returns the settings stored in ctx, or the zero Settings when there are none (or ctx is
// nil). It costs one context lookup; a layer reads it once per request.
func From(ctx context.Context) Settings {
	if ctx == nil {
		return Settings{}
	}
	if v, ok := ctx.Value(settingsKey{}).(*values); ok {
		return Settings{v: v}
	}
	return Settings{}
}

// with returns a copy of ctx whose settings are ctx's changed by f.
func with(ctx context.Context, f func(*values)) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	v := *From(ctx).vals() // a copy: the values ctx holds are shared
	f(&v)
	return context.WithValue(ctx, settingsKey{}, &v)
}

// noValues are the values of the zero Settings.
var noValues values

// vals returns the values of s (noValues when it holds none), not to be modified.
func (s Settings) vals() *values {
	if s.v == nil {
		return &noValues
	}
	return s.v
}

// invalid records a setting that cannot be used.
func (s *values) invalid(format string, args ...any) {
	s.err = errors.Join(s.err, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
}

// Err reports the settings that were given values they cannot use, as an error matching ErrInvalid
// that names each, or nil. The stack's layers fail the request with it.
func (s Settings) Err() error { return s.vals().err }

// WithAttempts returns a copy of ctx whose request is attempted at most n times, the first attempt
// included, instead of the retry layer's maximum (retry.WithMaxAttempts): 1 means no retry. The
// retry layer's other rules (which requests may be sent again, the budget, the deadlines) still
// apply. n must be at least 1. A nil ctx is taken as context.Background().
func WithAttempts(ctx context.Context, n int) context.Context {
	return with(ctx, func(s *values) {
		if n < 1 {
			s.invalid("WithAttempts(%d): must be at least 1", n)
			return
		}
		s.attempts, s.set = n, s.set|fieldAttempts
	})
}

// Attempts returns the maximum number of attempts WithAttempts set, and whether it was set.
func (s Settings) Attempts() (int, bool) {
	v := s.vals()
	return v.attempts, v.set&fieldAttempts != 0
}

// WithMaxWait returns a copy of ctx whose request waits at most d for its key's pause or learned
// pace in the throttle, instead of the throttle's maximum (client.WithMaxWait,
// throttle.WithMaxWait): a longer predicted wait fails the attempt at once with an error matching
// throttle.ErrWaitTooLong. 0 waits as long as it takes (bounded by ctx). d must not be negative. A
// nil ctx is taken as context.Background().
func WithMaxWait(ctx context.Context, d time.Duration) context.Context {
	return with(ctx, func(s *values) {
		if d < 0 {
			s.invalid("WithMaxWait(%v): must not be negative", d)
			return
		}
		s.maxWait, s.set = d, s.set|fieldMaxWait
	})
}

// MaxWait returns the maximum wait WithMaxWait set, and whether it was set.
func (s Settings) MaxWait() (time.Duration, bool) {
	v := s.vals()
	return v.maxWait, v.set&fieldMaxWait != 0
}

// WithAttemptTimeout returns a copy of ctx whose request gives each attempt at most d to obtain its
// response headers, instead of the retry layer's per-attempt timeout (retry.WithAttemptTimeout); an
// attempt that runs out fails with an error matching retry.ErrAttemptTimeout and is retried like a
// transport timeout. 0 means no per-attempt timeout for this request. d must not be negative. A nil
// ctx is taken as context.Background().
func WithAttemptTimeout(ctx context.Context, d time.Duration) context.Context {
	return with(ctx, func(s *values) {
		if d < 0 {
			s.invalid("WithAttemptTimeout(%v): must not be negative", d)
			return
		}
		s.attemptTimeout, s.set = d, s.set|fieldAttemptTimeout
	})
}

// AttemptTimeout returns the per-attempt timeout WithAttemptTimeout set, and whether it was set.
func (s Settings) AttemptTimeout() (time.Duration, bool) {
	v := s.vals()
	return v.attemptTimeout, v.set&fieldAttemptTimeout != 0
}

// WithKey returns a copy of ctx whose request is paced, paused and counted by the circuit breaker
// under key instead of the key the stack's key function gives it (the URL's host by default):
// for example the API token a call spends. key must not be empty. A nil ctx is taken as
// context.Background().
func WithKey(ctx context.Context, key string) context.Context {
	return with(ctx, func(s *values) {
		if key == "" {
			s.invalid("WithKey(\"\"): must not be empty")
			return
		}
		s.key, s.set = key, s.set|fieldKey
	})
}

// Key returns the key WithKey set, and whether it was set.
func (s Settings) Key() (string, bool) {
	v := s.vals()
	return v.key, v.set&fieldKey != 0
}

// WithCost returns a copy of ctx whose request weighs n units of its key's quota (tokens of an LLM
// API, points of a GraphQL API) rather than one request: the throttle books it with a limiter that
// weighs requests (throttle.CostReserver), as the default learner does, which paces by whichever of
// the server's quotas, requests or units, runs out first. steady's token bucket, leaky bucket and
// window limiters count every request as one and do not read it. n must be at least 1. A nil ctx is
// taken as context.Background().
func WithCost(ctx context.Context, n int) context.Context {
	return with(ctx, func(s *values) {
		if n < 1 {
			s.invalid("WithCost(%d): must be at least 1", n)
			return
		}
		s.cost, s.set = n, s.set|fieldCost
	})
}

// Cost returns the cost WithCost set, and whether it was set. A request without one weighs 1.
func (s Settings) Cost() (int, bool) {
	v := s.vals()
	return v.cost, v.set&fieldCost != 0
}
