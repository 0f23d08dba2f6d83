package redisstore

import (
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/steadyhttp/steady/testserver"
)

// Defaults of the options.
const (
	// DefaultTimeout is the default deadline of one Apply's Redis round trip (WithTimeout). A
	// round trip with Redis healthy takes the network's round trip (up to tens of milliseconds
	// between zones), Redis running the batch it carries (about 30 µs a script: 20 ms for a
	// burst of 600 on one Redis), and the time the process takes to read the reply when a burst
	// has just arrived on a busy 2-core host (tens of milliseconds). Missing it sends the decision
	// to the policy, which may admit beyond the limit, so it is set at several times their sum at
	// a 30 ms round trip; a hanging Redis costs a decision at most twice this, and only until
	// the circuit opens.
	DefaultTimeout = 250 * time.Millisecond
	// DefaultRetryInterval is how long the store skips Redis after a failure (WithRetryInterval).
	DefaultRetryInterval = time.Second
	// DefaultKeyPrefix starts every key the store writes (WithKeyPrefix).
	DefaultKeyPrefix = "steady:"
)

// Option configures a Store; pass options to New or Open.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// config is the store's settings after the options.
type config struct {
	timeout       time.Duration
	retryInterval time.Duration
	failureWindow time.Duration
	pipelines     int
	policy        Policy
	rulePolicy    map[string]Policy
	share         float64
	shareSet      bool
	instances     int64
	fallbackKeys  int
	callerClock   bool
	prefix        string
	hashTag       func(rule, key string) string
	onError       func(error)
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		timeout:       DefaultTimeout,
		retryInterval: DefaultRetryInterval,
		failureWindow: DefaultRetryInterval,
		pipelines:     DefaultPipelines,
		policy:        Fallback,
		share:         1,
		prefix:        DefaultKeyPrefix,
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func optionErr(option, value, why string) error {
	return &testserver.OptionError{Option: option, Value: value, Err: fmt.Errorf("%w: %s", testserver.ErrInvalidOption, why)}
}

// WithTimeout sets the deadline of every Apply's Redis round trip, counted from when its round
// trip is sent; default DefaultTimeout (250 ms). When Redis has not answered by then, the checks
// are decided by their Policy. A decision waits at most one round trip (itself bounded by d) for a
// free pipeline before its own is sent (WithPipelines), so Apply returns within 2d even when Redis
// hangs (a shorter deadline on the caller's context wins). d must be positive.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return optionErr("WithTimeout", d.String(), "must be positive")
		}
		c.timeout = d
		return nil
	})
}

// WithRetryInterval sets how long the store leaves Redis alone after a failed round trip (an error
// or the deadline); default DefaultRetryInterval (1 s). Meanwhile every Apply is decided by policy
// at once instead of paying the deadline again; then one Apply probes Redis (the others keep
// deciding by policy until it answers), and the first success closes the circuit. d must be
// positive.
func WithRetryInterval(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return optionErr("WithRetryInterval", d.String(), "must be positive")
		}
		c.retryInterval = d
		return nil
	})
}

// WithPolicy sets the failure policy of rules without their own (WithRulePolicy); default Fallback.
func WithPolicy(p Policy) Option {
	return optionFunc(func(c *config) error {
		if !p.valid() {
			return optionErr("WithPolicy", p.String(), "unknown policy")
		}
		c.policy = p
		return nil
	})
}

// WithRulePolicy sets the failure policy of the rule called rule (StoreCheck.Rule, the rule's
// Name); rules without one use WithPolicy's. Later calls for the same rule win.
func WithRulePolicy(rule string, p Policy) Option {
	return optionFunc(func(c *config) error {
		if !p.valid() {
			return optionErr("WithRulePolicy", p.String(), "unknown policy")
		}
		c.rulePolicy = maps.Clone(c.rulePolicy)
		if c.rulePolicy == nil {
			c.rulePolicy = map[string]Policy{}
		}
		c.rulePolicy[rule] = p
		return nil
	})
}

// WithFallbackShare sets the share of every limit the Fallback policy enforces locally: a check
// with limit L is decided against max(1, floor(L*share)) (buckets scale their burst in proportion,
// see algorithm.Scale). Default 1/N for N instances: N from WithInstances, else the number of
// stores registered in Redis (each store renews its registration every retry interval; see the
// package documentation), and 1 while N is unknown (a store that never reached Redis). A fixed
// share overrides both. share must be in (0, 1].
func WithFallbackShare(share float64) Option {
	return optionFunc(func(c *config) error {
		if !(share > 0 && share <= 1) || math.IsNaN(share) {
			return optionErr("WithFallbackShare", fmt.Sprint(share), "must be in (0, 1]")
		}
		c.share, c.shareSet = share, true
		return nil
	})
}

// WithFallbackMaxKeys caps the states of the Fallback policy's local store; default
// testserver.DefaultMaxKeys. It must not be negative (0 keeps the default).
func WithFallbackMaxKeys(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 0 {
			return optionErr("WithFallbackMaxKeys", fmt.Sprint(n), "must not be negative")
		}
		c.fallbackKeys = n
		return nil
	})
}

// WithCallerClock makes the script decide at the now passed to Apply (truncated to whole
// microseconds) instead of reading Redis's TIME; default off. Use it to replay traces with
// controlled times in tests. Instances whose clocks disagree then decide differently, which is
// why it is off by default. Keys still expire by Redis's own clock, after the idle time the
// caller's clock implies but never sooner than CallerClockMinTTL, so that a replay running slower
// than real time does not see its states forgotten early.
func WithCallerClock() Option {
	return optionFunc(func(c *config) error {
		c.callerClock = true
		return nil
	})
}

// WithKeyPrefix sets the prefix of every key the store writes; default DefaultKeyPrefix
// ("steady:"). Stores that share a Redis and a prefix share their limits. The prefix must not
// contain '{' or '}' (it would change the hash tag; see WithHashTag).
func WithKeyPrefix(prefix string) Option {
	return optionFunc(func(c *config) error {
		for _, r := range prefix {
			if r == '{' || r == '}' {
				return optionErr("WithKeyPrefix", prefix, "must not contain '{' or '}'")
			}
		}
		c.prefix = prefix
		return nil
	})
}

// WithHashTag sets the function that chooses the Redis Cluster hash tag of a check's keys from
// its rule name and request key; default the request key itself. All keys of one Apply must share
// a tag under Redis Cluster (or a Ring): Apply returns ErrCrossSlot otherwise. The default suits
// rules keyed alike (for example several rules all keyed by "user"); a request that must pass
// rules with different keys (ip and user) needs a tag they share, such as a constant, which puts
// all those keys on one node. Redis ends a tag at its first '}', so the store does too; an empty
// tag is written as "_". With a single Redis server the tag only shapes the key names.
// f must be safe for concurrent use; nil is an error.
func WithHashTag(f func(rule, key string) string) Option {
	return optionFunc(func(c *config) error {
		if f == nil {
			return optionErr("WithHashTag", "nil", "must not be nil")
		}
		c.hashTag = f
		return nil
	})
}

// WithErrorHook sets a function called with every Redis failure (errors and missed deadlines, not
// the caller's own cancellations), for logging; default none. It runs on the Apply's goroutine,
// must be safe for concurrent use and should return quickly.
func WithErrorHook(f func(error)) Option {
	return optionFunc(func(c *config) error {
		c.onError = f
		return nil
	})
}

// policyOf returns the failure policy of the rule.
func (c *config) policyOf(rule string) Policy {
	if p, ok := c.rulePolicy[rule]; ok {
		return p
	}
	return c.policy
}

// WithFailureWindow sets how long Redis must keep failing (every round trip an error or a missed
// deadline, none answered) before the circuit opens; default DefaultRetryInterval (1 s). Until
// then each failed decision is decided by policy on its own and the next still asks Redis, so one
// slow round trip, or a short stall, does not send a whole retry interval to the policy. A refused
// connection (nobody listens) opens the circuit at once. d must be positive.
func WithFailureWindow(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return optionErr("WithFailureWindow", d.String(), "must be positive")
		}
		c.failureWindow = d
		return nil
	})
}

// WithPipelines sets how many round trips to Redis the store keeps in flight at once; default
// DefaultPipelines (4). Decisions that arrive while all are in flight wait for the first to come
// back and share the next one (one pipeline of scripts), so a burst costs a few round trips, and a
// decision waits at most one round trip (bounded by its deadline) before its own is sent. Each
// pipeline holds one connection, which Open keeps open. n must be at least 1.
func WithPipelines(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return optionErr("WithPipelines", fmt.Sprint(n), "must be at least 1")
		}
		c.pipelines = n
		return nil
	})
}

// WithInstances sets the number of instances that share the limits, for the Fallback policy's
// default share (1/n) instead of the count registered in Redis; default 0 (use the registered
// count). Set it when instances may start while Redis is down (they have never seen the count).
// n must not be negative.
func WithInstances(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 0 {
			return optionErr("WithInstances", fmt.Sprint(n), "must not be negative")
		}
		c.instances = int64(n)
		return nil
	})
}
