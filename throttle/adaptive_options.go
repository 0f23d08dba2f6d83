package throttle

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// Defaults of an Adaptive limiter; each is documented on the option that changes it.
const (
	// DefaultInitialRate is the pace, in requests per second, of an Adaptive limiter waiting for
	// its first response, and the rate its search starts from when a throttle measured nothing
	// (see WithInitialRate).
	DefaultInitialRate = 20.0
	// DefaultMinRate is the slowest pace, in requests per second, that throttles alone can push an
	// Adaptive limiter down to (see WithRateBounds).
	DefaultMinRate = 0.05
	// DefaultMaxRate is the fastest pace, in requests per second, an Adaptive limiter ever takes,
	// whatever a server claims (see WithRateBounds).
	DefaultMaxRate = 100000.0
	// DefaultHeadroom is the fraction below a server's declared or measured rate at which an
	// Adaptive limiter paces (see WithHeadroom).
	DefaultHeadroom = 0.005
	// DefaultDecayHalfLife is how fast what an Adaptive limiter learned fades while its key is quiet
	// (see WithDecayHalfLife).
	DefaultDecayHalfLife = time.Minute
)

// AdaptiveOption configures an Adaptive limiter in NewAdaptive and AdaptiveFactory.
type AdaptiveOption interface {
	applyAdaptive(*adaptiveConfig) error
}

type adaptiveOptionFunc func(*adaptiveConfig) error

func (f adaptiveOptionFunc) applyAdaptive(c *adaptiveConfig) error { return f(c) }

type adaptiveConfig struct {
	initialRate float64
	minRate     float64
	maxRate     float64
	headroom    float64
	halfLife    time.Duration
	statuses    []int
}

func defaultAdaptiveConfig() adaptiveConfig {
	return adaptiveConfig{
		initialRate: DefaultInitialRate,
		minRate:     DefaultMinRate,
		maxRate:     DefaultMaxRate,
		headroom:    DefaultHeadroom,
		halfLife:    DefaultDecayHalfLife,
		statuses:    []int{http.StatusTooManyRequests},
	}
}

func finitePositive(r float64) bool { return r > 0 && !math.IsInf(r, 0) && !math.IsNaN(r) }

// WithInitialRate sets the pace, in requests per second, of the cold start: before the first
// response (and after everything learned was forgotten), the first request goes at once and the
// next ones are spaced 1/rate apart until a response is observed. A response without a signal
// (no throttle, no rate-limit header) ends the pace: from then on nothing is paced until the
// server gives one. The rate is also where the search (slow start) begins when the first throttle
// comes with too few successes to measure, and where a rate that was learned decays towards while
// the key is quiet. The default is DefaultInitialRate (20/s). It
// must be positive, finite and within the rate bounds, else NewAdaptive fails with ErrInvalidRate.
func WithInitialRate(perSec float64) AdaptiveOption {
	return adaptiveOptionFunc(func(c *adaptiveConfig) error {
		if !finitePositive(perSec) {
			return fmt.Errorf("%w: initial rate %v", ErrInvalidRate, perSec)
		}
		c.initialRate = perSec
		return nil
	})
}

// WithRateBounds bounds the pace, in requests per second. max caps every rate the limiter takes,
// including a server's claim (a header promising 10^9 requests per second is read as max); the
// default is DefaultMaxRate (100,000/s). min is the floor that cuts on throttled responses cannot go
// below (a server that declares a slower rate in its headers is still obeyed); the default is
// DefaultMinRate (0.05/s, one request every 20 s). Both must be positive and finite with
// min <= max, else NewAdaptive fails with ErrInvalidRate.
func WithRateBounds(minPerSec, maxPerSec float64) AdaptiveOption {
	return adaptiveOptionFunc(func(c *adaptiveConfig) error {
		if !finitePositive(minPerSec) || !finitePositive(maxPerSec) || minPerSec > maxPerSec || maxPerSec > 1e9 {
			return fmt.Errorf("%w: bounds [%v, %v]", ErrInvalidRate, minPerSec, maxPerSec)
		}
		c.minRate, c.maxRate = minPerSec, maxPerSec
		return nil
	})
}

// WithHeadroom sets how far below the server's rate the limiter paces, as a fraction: 0.005 (the
// default, DefaultHeadroom) paces at 99.5% of a declared rate. Headroom absorbs the jitter of the
// network, which bunches requests that left evenly spaced. It must be in [0, 0.5], else
// NewAdaptive fails with ErrInvalidOption.
func WithHeadroom(fraction float64) AdaptiveOption {
	return adaptiveOptionFunc(func(c *adaptiveConfig) error {
		if math.IsNaN(fraction) || fraction < 0 || fraction > 0.5 {
			return fmt.Errorf("%w: headroom %v not in [0, 0.5]", ErrInvalidOption, fraction)
		}
		c.headroom = fraction
		return nil
	})
}

// WithThrottleStatuses sets the response statuses that mean "slow down" (default: 429 only). Add
// 503 for servers that answer overload with it. A Retry-After on any response pauses the key in
// the Transport whatever its status; these statuses are what the limiter cuts its rate on. Codes
// outside 100..599, or none at all, make NewAdaptive fail with ErrInvalidOption.
func WithThrottleStatuses(codes ...int) AdaptiveOption {
	return adaptiveOptionFunc(func(c *adaptiveConfig) error {
		if len(codes) == 0 {
			return fmt.Errorf("%w: no throttle status", ErrInvalidOption)
		}
		for _, code := range codes {
			if code < 100 || code > 599 {
				return fmt.Errorf("%w: throttle status %d", ErrInvalidOption, code)
			}
		}
		c.statuses = append([]int(nil), codes...)
		return nil
	})
}

// WithDecayHalfLife sets how fast what the limiter learned fades while its key is quiet. The
// decay is computed from the time of the next Reserve, with no timer: after a quiet spell of one
// half-life the pace is halfway back to the initial rate and the limiter probes upwards again as
// it does at a cold start (a server's limit may have changed meanwhile); after twenty half-lives
// everything learned is forgotten. The default is DefaultDecayHalfLife (one minute). It must be
// positive, else NewAdaptive fails with ErrInvalidOption.
func WithDecayHalfLife(d time.Duration) AdaptiveOption {
	return adaptiveOptionFunc(func(c *adaptiveConfig) error {
		if d <= 0 {
			return fmt.Errorf("%w: decay half-life %v", ErrInvalidOption, d)
		}
		c.halfLife = d
		return nil
	})
}
