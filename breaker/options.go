package breaker

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// Defaults of a Breaker; each Option documents the one it changes.
const (
	DefaultFailureRatio = 0.5
	DefaultMinRequests  = 20
	DefaultWindow       = 10 * time.Second
	DefaultCooldown     = 5 * time.Second
	DefaultProbes       = 1
	DefaultMaxKeys      = 10000
)

// Mode is what a request for an open circuit does.
type Mode int

const (
	// Pause: the request waits until the circuit lets it go (the default).
	Pause Mode = iota
	// FailFast: the request fails at once with *OpenError.
	FailFast
)

// String returns "pause", "fail-fast", or "Mode(n)".
func (m Mode) String() string {
	switch m {
	case Pause:
		return "pause"
	case FailFast:
		return "fail-fast"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Classifier tells what the result of one request says about the server: resp is its response (nil
// when err is not nil), err its transport error. It must be safe for concurrent use and must not
// read or close resp.Body.
type Classifier func(resp *http.Response, err error) Outcome

// Event describes one state change of a circuit, for the observer.
type Event struct {
	Key      string
	From, To State
	// At is the instant of the change.
	At time.Time
	// Requests and Failures are the window's counts that opened a closed circuit; 0 otherwise.
	Requests, Failures int
}

// An Option configures a Breaker in New.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	failureRatio float64
	minRequests  int
	window       time.Duration
	cooldown     time.Duration
	probes       int
	mode         Mode
	classifier   Classifier
	observer     func(Event)
	keyFunc      func(*http.Request) string
	maxKeys      int
}

func defaultConfig() config {
	return config{
		failureRatio: DefaultFailureRatio,
		minRequests:  DefaultMinRequests,
		window:       DefaultWindow,
		cooldown:     DefaultCooldown,
		probes:       DefaultProbes,
		classifier:   DefaultClassifier,
		keyFunc:      hostKey,
		maxKeys:      DefaultMaxKeys,
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

func hostKey(req *http.Request) string { return req.URL.Host }

// WithFailureRatio sets the share of failures in the window at which a closed circuit opens
// (default DefaultFailureRatio, 0.5). r must be above 0 and at most 1.
func WithFailureRatio(r float64) Option {
	return optionFunc(func(c *config) error {
		if math.IsNaN(r) || r <= 0 || r > 1 {
			return invalid("WithFailureRatio(%v): must be above 0 and at most 1", r)
		}
		c.failureRatio = r
		return nil
	})
}

// WithMinRequests sets how many outcomes the window must hold before its failure ratio can open the
// circuit (default DefaultMinRequests, 20), so that two failures out of three on a quiet key do not
// open it. n must be at least 1.
func WithMinRequests(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return invalid("WithMinRequests(%d): must be at least 1", n)
		}
		c.minRequests = n
		return nil
	})
}

// WithWindow sets the length of the sliding window the outcomes are counted over (default
// DefaultWindow, 10s); it slides in tenths. d must be at least 10ns.
func WithWindow(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < numBuckets {
			return invalid("WithWindow(%v): must be at least %dns", d, numBuckets)
		}
		c.window = d
		return nil
	})
}

// WithCooldown sets how long an open circuit stays open before it half-opens (default
// DefaultCooldown, 5s). d must be above 0.
func WithCooldown(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return invalid("WithCooldown(%v): must be above 0", d)
		}
		c.cooldown = d
		return nil
	})
}

// WithProbes sets how many requests a half-open circuit lets go, and how many of them must succeed
// to close it (default DefaultProbes, 1). n must be at least 1.
func WithProbes(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return invalid("WithProbes(%d): must be at least 1", n)
		}
		c.probes = n
		return nil
	})
}

// WithMode sets what a request for an open circuit does: Pause (the default) or FailFast.
func WithMode(m Mode) Option {
	return optionFunc(func(c *config) error {
		if m != Pause && m != FailFast {
			return invalid("WithMode(%v)", m)
		}
		c.mode = m
		return nil
	})
}

// WithClassifier replaces the decision of which results are failures (default DefaultClassifier).
// cl must not be nil.
func WithClassifier(cl Classifier) Option {
	return optionFunc(func(c *config) error {
		if cl == nil {
			return invalid("WithClassifier(nil)")
		}
		c.classifier = cl
		return nil
	})
}

// WithObserver sets a function told of every state change of every circuit (default: none; nil
// removes it). It is called synchronously, with the circuit's lock released, on the goroutine of
// the request that caused the change; it must be quick and safe for concurrent use. Changes of one
// circuit may reach it out of order when requests race; Event.At orders them.
func WithObserver(f func(Event)) Option {
	return optionFunc(func(c *config) error {
		c.observer = f
		return nil
	})
}

// WithKeyFunc sets the key a request's circuit is chosen by (default: the URL's host, including a
// port when the URL names one). A key set in the request's context with request.WithKey takes
// precedence. f is called for every request, from many goroutines at once, and must not modify it.
// f must not be nil.
func WithKeyFunc(f func(*http.Request) string) Option {
	return optionFunc(func(c *config) error {
		if f == nil {
			return invalid("WithKeyFunc(nil)")
		}
		c.keyFunc = f
		return nil
	})
}

// WithMaxKeys bounds the number of keys the Breaker keeps a circuit for (default DefaultMaxKeys).
// When a new key arrives and the bound is reached, a closed circuit is forgotten (with its window);
// when none is closed, the new key's requests go unguarded until one is. n must be at least 1.
func WithMaxKeys(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return invalid("WithMaxKeys(%d): must be at least 1", n)
		}
		c.maxKeys = n
		return nil
	})
}
