package queue

import (
	"net/http"
	"time"
)

// Defaults used by New when the corresponding option is not given.
const (
	// DefaultMaxInFlight is the default number of places (requests in flight at once): large enough
	// not to hold back an ordinary program, small enough that a runaway fan-out waits in line instead
	// of opening thousands of connections at once.
	DefaultMaxInFlight = 100
	// DefaultMaxWaiting is the default length of the waiting line.
	DefaultMaxWaiting = 10_000
	// DefaultStarvationLimit is the default K of the anti-starvation rule (see the package
	// documentation): a waiting class is passed over at most this many times in a row.
	DefaultStarvationLimit = 10
)

// Option configures a Queue in New.
type Option interface {
	apply(*config)
}

type config struct {
	maxInFlight int
	maxWaiting  int
	starvation  int
	onWait      func(req *http.Request, waited time.Duration)
}

func defaultConfig() config {
	return config{
		maxInFlight: DefaultMaxInFlight,
		maxWaiting:  DefaultMaxWaiting,
		starvation:  DefaultStarvationLimit,
	}
}

// validate reports the first option value that New cannot accept.
func (c *config) validate() error {
	switch {
	case c.maxInFlight < 0:
		return &OptionError{Option: "WithMaxInFlight", Value: c.maxInFlight, Reason: "must be 0 (unlimited) or more"}
	case c.maxWaiting < 0:
		return &OptionError{Option: "WithMaxWaiting", Value: c.maxWaiting, Reason: "must be 0 (no line) or more"}
	case c.starvation < 1:
		return &OptionError{Option: "WithStarvationLimit", Value: c.starvation, Reason: "must be at least 1"}
	}
	return nil
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMaxInFlight sets how many requests may hold a place at once. 0 means unlimited: every request
// is admitted at once and nobody ever waits. Negative values make New fail.
// Default: DefaultMaxInFlight (100).
func WithMaxInFlight(n int) Option {
	return optionFunc(func(c *config) { c.maxInFlight = n })
}

// WithMaxWaiting sets how many requests may wait for a place; a request that finds the line full is
// refused with ErrQueueFull. 0 means no line: a request either gets a place at once or is refused.
// Negative values make New fail. Default: DefaultMaxWaiting (10,000).
func WithMaxWaiting(n int) Option {
	return optionFunc(func(c *config) { c.maxWaiting = n })
}

// WithStarvationLimit sets K of the anti-starvation rule: after K places in a row went to more
// important classes while a class had someone waiting, that class's oldest waiter is served next.
// Smaller K is fairer to Low and Normal requests, larger K favours High ones. K must be at least 1.
// Default: DefaultStarvationLimit (10).
func WithStarvationLimit(k int) Option {
	return optionFunc(func(c *config) { c.starvation = k })
}

// WithWaitObserver sets a function the Transport calls after each request that had to wait in line
// for its place and then got one, with the request and how long it waited. It is meant for metrics
// and logs: it runs on the request's goroutine, so it must be quick and safe for concurrent use, and
// must not modify req. The default, like nil, observes nothing and reads no extra clock.
func WithWaitObserver(f func(req *http.Request, waited time.Duration)) Option {
	return optionFunc(func(c *config) { c.onWait = f })
}
