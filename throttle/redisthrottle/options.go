package redisthrottle

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"
)

// Defaults, each documented on the option that changes it.
const (
	// DefaultTimeout is the deadline of each Redis call (see WithTimeout).
	DefaultTimeout = 50 * time.Millisecond
	// DefaultRecheck is how long a limiter keeps to its local fallback after a failed Redis call
	// before it tries Redis again (see WithRecheck).
	DefaultRecheck = time.Second
	// DefaultInitialRate is the shared pace, in requests per second, of a learning limiter whose
	// key has no learned state in Redis yet (see WithInitialRate).
	DefaultInitialRate = 20.0
	// DefaultMinRate is the slowest pace, in requests per second, that throttled responses alone
	// can push a learning limiter down to (see WithRateBounds).
	DefaultMinRate = 0.05
	// DefaultMaxRate is the fastest pace, in requests per second, a learning limiter ever takes,
	// whatever a server claims (see WithRateBounds).
	DefaultMaxRate = 100000.0
	// DefaultHeadroom is the fraction below a server's advertised or measured rate at which a
	// learning limiter paces (see WithHeadroom).
	DefaultHeadroom = 0.01
	// DefaultSharedPause is the shortest Retry-After that pauses the key for every process (see
	// WithSharedPause).
	DefaultSharedPause = 2 * time.Second
	// DefaultMaxPause is the longest pause a Retry-After shares through Redis (see WithMaxPause):
	// the longest Retry-After client.New's retry layer waits out by default
	// (retry.DefaultMaxRetryAfter), which bounds each process's own pause too.
	DefaultMaxPause = time.Minute
	// DefaultForget is how long the learned state of a key stays in Redis after its last
	// reservation (see WithForget).
	DefaultForget = 10 * time.Minute
)

// Limits of the arithmetic. Redis scripts compute in Lua doubles, exact for integers up to 2^53;
// times are microseconds since the Unix epoch (about 1.8e15 in 2026, exact until the year 2255)
// and an interval times a burst must stay below maxSpan so that no sum leaves that range.
const (
	// MaxRate is the fastest pace a limiter can hold, in requests per second: one request per
	// microsecond, the resolution of Redis TIME.
	MaxRate = 1e6
	// MinRate is the slowest pace a limiter can hold: one request every 10^6 seconds (11.6 days).
	MinRate = 1e-6
	// maxSpan bounds interval*burst in microseconds (about 31 years).
	maxSpan = int64(1e15)
)

// Option configures a Limiter in New and Factory.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	known    bool    // WithRate was given: a fixed pace, no learning
	rate     float64 // known rate
	burst    int     // known burst
	timeout  time.Duration
	recheck  time.Duration
	share    float64 // 0: automatic (1 / live processes)
	initial  float64
	minRate  float64
	maxRate  float64
	headroom float64
	statuses []int
	pauseMin time.Duration
	pauseMax time.Duration
	forget   time.Duration
	logger   *slog.Logger
}

func defaultConfig() config {
	return config{
		burst:    1,
		timeout:  DefaultTimeout,
		recheck:  DefaultRecheck,
		initial:  DefaultInitialRate,
		minRate:  DefaultMinRate,
		maxRate:  DefaultMaxRate,
		headroom: DefaultHeadroom,
		statuses: []int{http.StatusTooManyRequests},
		pauseMin: DefaultSharedPause,
		pauseMax: DefaultMaxPause,
		forget:   DefaultForget,
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// intervalMicros is the emission interval of rate in whole microseconds, rounded up so that the
// pace is never faster than rate.
func intervalMicros(rate float64) int64 { return int64(math.Ceil(1e6 / rate)) }

// WithRate gives the limiter a known pace: ratePerSec requests per second shared by every process
// on the key, with bursts of up to burst requests (GCRA with emission interval 1/ratePerSec and
// tolerance (burst-1)/ratePerSec, the token bucket's meaning of burst). The limiter then does not
// learn: responses only pause the key on Retry-After. Without WithRate the limiter learns the
// shared pace from the server's answers.
//
// The interval is 1/ratePerSec rounded up to a whole microsecond, so the pace is never faster than
// asked (100/s is exact; 3/s becomes one request per 333,334 µs). ratePerSec must be in
// [MinRate, MaxRate] and burst at least 1 with interval*burst below 31 years, else New fails with
// ErrInvalidOption. A burst of 1 spaces requests evenly, which is what a server whose own burst is
// small wants: requests that leave exactly one interval apart reach it with network jitter, and
// its burst is what absorbs that.
func WithRate(ratePerSec float64, burst int) Option {
	return optionFunc(func(c *config) error {
		if !finite(ratePerSec) || ratePerSec < MinRate || ratePerSec > MaxRate {
			return fmt.Errorf("%w: rate %v not in [%v, %v] per second", ErrInvalidOption, ratePerSec, MinRate, MaxRate)
		}
		if burst < 1 || intervalMicros(ratePerSec) > maxSpan/int64(burst) {
			return fmt.Errorf("%w: burst %d at rate %v", ErrInvalidOption, burst, ratePerSec)
		}
		c.known, c.rate, c.burst = true, ratePerSec, burst
		return nil
	})
}

// WithTimeout sets the deadline of each Redis call a limiter makes (a reservation, a cancellation,
// a report of a throttled response). A call that does not finish in time counts as a failure: the
// reservation is served by the local fallback instead (see WithFallbackShare). The default is
// DefaultTimeout (50 ms); d must be positive, else New fails with ErrInvalidOption.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: timeout %v", ErrInvalidOption, d)
		}
		c.timeout = d
		return nil
	})
}

// WithRecheck sets how long a limiter serves reservations from its local fallback after a failed
// Redis call before it tries Redis again, so that a Redis that is down costs one failed call per
// period rather than one per request. The default is DefaultRecheck (1 s); d must be positive,
// else New fails with ErrInvalidOption.
func WithRecheck(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: recheck %v", ErrInvalidOption, d)
		}
		c.recheck = d
		return nil
	})
}

// WithFallbackShare sets the share of the shared pace a limiter takes for itself while Redis is
// unreachable: it then paces locally at share times the rate (the known rate; or, learning, the
// rate of the law it holds, which goes on learning from this process's answers alone while Redis
// is unreachable, capped by the rate the server declares). For N processes on one key, 1/N keeps
// them together under the rate.
//
// The default is automatic: 1/n, where n is the number of processes that used the key in the
// last LiveWindow, as last counted in Redis (every limiter registers itself there about once a
// second). A limiter that has never reached Redis knows of no other process and takes the whole
// rate; give WithFallbackShare when processes may start while Redis is down. share must be in
// (0, 1], else New fails with ErrInvalidOption.
func WithFallbackShare(share float64) Option {
	return optionFunc(func(c *config) error {
		if !finite(share) || share <= 0 || share > 1 {
			return fmt.Errorf("%w: fallback share %v not in (0, 1]", ErrInvalidOption, share)
		}
		c.share = share
		return nil
	})
}

// WithInitialRate sets the shared pace, in requests per second, a learning limiter starts from
// when its key has no learned state in Redis (the first process, or after the state was forgotten
// or Redis lost it), until a round trip is measured; from there the startup's pace grows with the
// successes (see New) until the first throttled response or declared rate. The default is
// DefaultInitialRate (20/s); it must be finite and within the rate bounds, else New fails with
// ErrInvalidOption. Ignored with WithRate.
func WithInitialRate(ratePerSec float64) Option {
	return optionFunc(func(c *config) error {
		if !finite(ratePerSec) || ratePerSec < MinRate || ratePerSec > MaxRate {
			return fmt.Errorf("%w: initial rate %v", ErrInvalidOption, ratePerSec)
		}
		c.initial = ratePerSec
		return nil
	})
}

// WithRateBounds bounds the pace of a learning limiter, in requests per second: max caps every
// rate it takes, a server's advertised rate included (the default is DefaultMaxRate, 100,000/s);
// min is the floor that cuts on throttled responses cannot go below (default DefaultMinRate,
// 0.05/s). Both must be in [MinRate, MaxRate] with min <= max, else New fails with
// ErrInvalidOption. Ignored with WithRate.
func WithRateBounds(minPerSec, maxPerSec float64) Option {
	return optionFunc(func(c *config) error {
		if !finite(minPerSec) || !finite(maxPerSec) || minPerSec < MinRate || maxPerSec > MaxRate || minPerSec > maxPerSec {
			return fmt.Errorf("%w: rate bounds [%v, %v]", ErrInvalidOption, minPerSec, maxPerSec)
		}
		c.minRate, c.maxRate = minPerSec, maxPerSec
		return nil
	})
}

// WithHeadroom sets how far below a rate the server advertises (RateLimit-Policy, or
// X-RateLimit-Limit with a window) a learning limiter paces, as a fraction: 0.01 (the default,
// DefaultHeadroom) paces at 99% of it. Headroom absorbs the jitter of the network, which bunches
// requests that left evenly spaced. It must be in [0, 0.5], else New fails with ErrInvalidOption.
// Ignored with WithRate (a known rate is paced exactly).
func WithHeadroom(fraction float64) Option {
	return optionFunc(func(c *config) error {
		if !finite(fraction) || fraction < 0 || fraction > 0.5 {
			return fmt.Errorf("%w: headroom %v not in [0, 0.5]", ErrInvalidOption, fraction)
		}
		c.headroom = fraction
		return nil
	})
}

// WithThrottleStatuses sets the response statuses that mean "slow down" (default: 429 only); add
// 503 for servers that answer overload with it. A learning limiter cuts the shared rate on them,
// and a Retry-After on them pauses the key for every process. Codes outside 100..599, or none at
// all, make New fail with ErrInvalidOption.
func WithThrottleStatuses(codes ...int) Option {
	return optionFunc(func(c *config) error {
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

// WithSharedPause sets the shortest Retry-After on a throttled response that pauses the key for
// every process, through Redis (the process that received it pauses anyway, in its Transport).
// Shorter ones pause only that process: delay-seconds are whole seconds, so a Retry-After of 1
// often stands for a moment (a token bucket that refills within milliseconds), and stopping every
// process for a whole second would waste the quota they share; a longer one says that the quota
// is gone for a while, which every process should hear at once rather than each from its own
// throttled request. The default is DefaultSharedPause (2 s); 0 shares every Retry-After, and a
// value above ratelimitheader.MaxDelay (24 h) shares none. d must not be negative, else New fails
// with ErrInvalidOption.
func WithSharedPause(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: shared pause %v", ErrInvalidOption, d)
		}
		c.pauseMin = d
		return nil
	})
}

// WithMaxPause bounds the pause one Retry-After shares through Redis: a longer one pauses every
// process for d. Keep it at the bound of each process's own pause (client.New: the retry layer's
// longest Retry-After, retry.WithMaxRetryAfter), so that one Retry-After of a day cannot hold the
// key for a day in Redis after every process's own pause ended. The default is DefaultMaxPause (1
// minute); d must be positive, else New fails with ErrInvalidOption.
func WithMaxPause(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: max pause %v", ErrInvalidOption, d)
		}
		c.pauseMax = d
		return nil
	})
}

// WithForget sets how long a key's learned state stays in Redis after the last reservation of
// any process: a key that goes quiet for that long starts over from the initial rate (the
// server's limit may have changed meanwhile), and Redis holds nothing for it. The default is
// DefaultForget (10 minutes); d must be at least a millisecond, else New fails with
// ErrInvalidOption. With WithRate the state expires as soon as it is back to its initial value,
// whatever d.
func WithForget(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("%w: forget %v", ErrInvalidOption, d)
		}
		c.forget = d
		return nil
	})
}

// WithLogger logs what the limiter does on l: at Warn level when Redis becomes unreachable (with
// the error, and the local pace the fallback takes), at Info level when it answers again, and, for
// a learning limiter, every step of the shared law that this process makes (a cut, a search step,
// a probe; "KEY: DETAIL", as learn.WithLogger) at Debug level. A nil l logs nothing (the default).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error { c.logger = l; return nil })
}
