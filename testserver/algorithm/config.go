package algorithm

import (
	"fmt"
	"strings"
	"time"
)

// Config holds the parameters shared by every algorithm.
type Config struct {
	// Limit is the quota: how many requests are admitted per Window in the long run. At least 1.
	Limit int64
	// Window is the period of the quota. Positive.
	Window time.Duration
	// Burst is how many requests a fresh key admits at one instant. Zero means Limit. Only the token
	// bucket (its capacity) and the leaky bucket (its queue) can differ from Limit; for the window
	// algorithms Burst must be 0 or Limit, because their burst is the limit by construction.
	Burst int64
}

// Names of the algorithms, as accepted by New and reported by Algorithm.Name.
const (
	NameTokenBucket   = "token-bucket"
	NameLeakyBucket   = "leaky-bucket"
	NameFixedWindow   = "fixed-window"
	NameSlidingLog    = "sliding-log"
	NameSlidingWindow = "sliding-window"
)

// constructors maps every name to its constructor, in the order Names reports them.
var constructors = []struct {
	name string
	new  func(Config) (Algorithm, error)
}{
	{NameTokenBucket, NewTokenBucket},
	{NameLeakyBucket, NewLeakyBucket},
	{NameFixedWindow, NewFixedWindow},
	{NameSlidingLog, NewSlidingLog},
	{NameSlidingWindow, NewSlidingWindow},
}

// Names returns the names New accepts, in a stable order: token-bucket, leaky-bucket, fixed-window,
// sliding-log, sliding-window. The caller owns the returned slice.
func Names() []string {
	names := make([]string, 0, len(constructors))
	for _, c := range constructors {
		names = append(names, c.name)
	}
	return names
}

// New returns the algorithm called name (one of Names) configured by c. An unknown name gives an
// error matching ErrUnknownAlgorithm; invalid parameters give errors matching ErrInvalidLimit,
// ErrInvalidWindow or ErrInvalidBurst.
func New(name string, c Config) (Algorithm, error) {
	for _, e := range constructors {
		if e.name == name {
			return e.new(c)
		}
	}
	return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownAlgorithm, name, strings.Join(Names(), ", "))
}

// params are validated parameters in integer nanoseconds.
type params struct {
	limit  int64 // quota per window, >= 1
	window int64 // window in nanoseconds, >= 1
	burst  int64 // requests admitted at one instant from a fresh state, >= 1
}

// validate checks c for the algorithm called name. burstFree tells whether the algorithm accepts a
// burst other than the limit.
func (c Config) validate(name string, burstFree bool) (params, error) {
	if c.Limit < 1 {
		return params{}, fmt.Errorf("%s: limit %d: %w", name, c.Limit, ErrInvalidLimit)
	}
	if c.Window <= 0 {
		return params{}, fmt.Errorf("%s: window %v: %w", name, c.Window, ErrInvalidWindow)
	}
	burst := c.Burst
	switch {
	case burst == 0:
		burst = c.Limit
	case burst < 0:
		return params{}, fmt.Errorf("%s: burst %d: %w", name, c.Burst, ErrInvalidBurst)
	case !burstFree && burst != c.Limit:
		return params{}, fmt.Errorf("%s: burst %d differs from limit %d, and this algorithm's burst is its limit (use 0): %w",
			name, c.Burst, c.Limit, ErrInvalidBurst)
	}
	return params{limit: c.Limit, window: int64(c.Window), burst: burst}, nil
}
