package learn

import (
	"errors"
	"fmt"
	"github.com/steadyhttp/steady/dialects"
	"log/slog"
	"math"
	"net/http"
	"time"
)

// ErrInvalidOption reports an Option with an unusable value; New wraps it with the value.
var ErrInvalidOption = errors.New("learn: invalid option")

// Option configures a Learner. Options are applied in order; nil options are skipped.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	key         string
	statuses    []int
	tun         Tuning
	observer    func(Event)
	logger      *slog.Logger
	maxPause    time.Duration
	hasMaxPause bool
	minRate     float64
	maxRate     float64
	dialects    *dialects.Reader
}

// Defaults of the rate bounds: a cut never paces slower than DefaultMinRate (one request every 20
// s; a server that declares slower is still obeyed), and no claim is taken above DefaultMaxRate.
const (
	DefaultMinRate = 0.05
	DefaultMaxRate = 100_000
)

func defaultConfig() config {
	return config{
		statuses: []int{http.StatusTooManyRequests},
		tun:      DefaultTuning(),
		minRate:  DefaultMinRate,
		maxRate:  DefaultMaxRate,
	}
}

// WithKey names the key the Learner paces, for its events and log lines ("" by default; Factory
// sets it to the throttle key).
func WithKey(key string) Option {
	return optionFunc(func(c *config) error { c.key = key; return nil })
}

// WithThrottleStatuses sets the statuses that mean "slow down" (default: 429 only); add 503 for a
// server that throttles with it. Codes outside 100..599, or none, are invalid.
func WithThrottleStatuses(codes ...int) Option {
	return optionFunc(func(c *config) error {
		if len(codes) == 0 {
			return fmt.Errorf("%w: no throttle status", ErrInvalidOption)
		}
		for _, s := range codes {
			if s < 100 || s > 599 {
				return fmt.Errorf("%w: throttle status %d", ErrInvalidOption, s)
			}
		}
		c.statuses = append([]int(nil), codes...)
		return nil
	})
}

// WithMaxPause bounds the hold a server's Retry-After sets on the Learner's plan: a longer one holds
// for d, and 0 holds for none (default: no bound). client.New passes the Throttle's bound
// (throttle.WithMaxPause, the longest Retry-After the retry layer waits out), so that one
// Retry-After of a day cannot hold a key longer in the learner than in the Throttle. A negative d
// is invalid.
func WithMaxPause(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: max pause %v", ErrInvalidOption, d)
		}
		c.maxPause, c.hasMaxPause = d, true
		return nil
	})
}

// WithTuning replaces DefaultTuning. Every fraction must be in (0, 1) (Headroom and ProbeGain in
// [0, 0.5], WholeShare in (0, 1]), JitterMargin non-negative and finite, DistrustAfter at least 1,
// and MeasureSuccesses from 2 to 64 (the successes the learner remembers); otherwise New fails with
// ErrInvalidOption.
func WithTuning(t Tuning) Option {
	return optionFunc(func(c *config) error {
		bad := func(name string, v any) error { return fmt.Errorf("%w: tuning %s = %v", ErrInvalidOption, name, v) }
		switch {
		case !(t.Headroom >= 0 && t.Headroom <= 0.5):
			return bad("Headroom", t.Headroom)
		case !(t.JitterMargin >= 0) || math.IsInf(t.JitterMargin, 0):
			return bad("JitterMargin", t.JitterMargin)
		case !(t.ThrottleBudget > 0 && t.ThrottleBudget < 1):
			return bad("ThrottleBudget", t.ThrottleBudget)
		case !(t.DeclaredBudget > 0 && t.DeclaredBudget < 1):
			return bad("DeclaredBudget", t.DeclaredBudget)
		case !(t.Backoff > 0 && t.Backoff < 1):
			return bad("Backoff", t.Backoff)
		case !(t.ProbeGain >= 0 && t.ProbeGain <= 0.5):
			return bad("ProbeGain", t.ProbeGain)
		case t.MeasureSuccesses < 2 || t.MeasureSuccesses > successLogSize:
			return bad("MeasureSuccesses", t.MeasureSuccesses)
		case t.DistrustAfter < 1:
			return bad("DistrustAfter", t.DistrustAfter)
		case !(t.WholeShare > 0 && t.WholeShare <= 1):
			return bad("WholeShare", t.WholeShare)
		}
		c.tun = t
		return nil
	})
}

// WithRateBounds bounds every rate the learner paces at, in requests per second (defaults
// DefaultMinRate and DefaultMaxRate). A declared rate below min is still obeyed. Both must be
// positive and finite with min <= max.
func WithRateBounds(minPerSec, maxPerSec float64) Option {
	return optionFunc(func(c *config) error {
		ok := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
		if !ok(minPerSec) || !ok(maxPerSec) || minPerSec > maxPerSec {
			return fmt.Errorf("%w: rate bounds [%v, %v]", ErrInvalidOption, minPerSec, maxPerSec)
		}
		c.minRate, c.maxRate = minPerSec, maxPerSec
		return nil
	})
}

// WithDialects reads responses with r (user dialects, a dialect forced for a host) instead of
// dialects.Read, which recognises the built-in dialects from each response. A nil r keeps the
// default.
func WithDialects(r *dialects.Reader) Option {
	return optionFunc(func(c *config) error { c.dialects = r; return nil })
}

// WithObserver calls f with every transition of the learner (see Event), on the goroutine of the
// response that caused it, with the learner's lock held: f must be quick and must not call the
// Learner. A nil f observes nothing (the default).
func WithObserver(f func(Event)) Option {
	return optionFunc(func(c *config) error { c.observer = f; return nil })
}

// WithLogger logs every transition at Debug level on l, as "KEY: DETAIL" with the strategy and
// state as attributes. A nil l logs nothing (the default).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error { c.logger = l; return nil })
}
