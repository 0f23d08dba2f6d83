package redisstore

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// kind is an algorithm as the script knows it.
type kind int64

const (
	kindTokenBucket   kind = 1
	kindLeakyBucket   kind = 2
	kindFixedWindow   kind = 3
	kindSlidingLog    kind = 4
	kindSlidingWindow kind = 5
)

// The bounds within which the script's arithmetic (Lua numbers are IEEE doubles, exact for
// integers up to 2^53) is exact. They leave a factor of two for the sums the script forms.
const (
	// MaxWindow is the longest window the store decides: 2^51 µs, about 71 years. A window must
	// also be a whole number of microseconds.
	MaxWindow = time.Duration(1<<51) * time.Microsecond
	// MaxCount bounds a check's Limit, Burst and N.
	MaxCount = 1 << 51
	// MaxProduct bounds Burst × Window (token and leaky bucket) and Limit × Window (sliding
	// window), with Window in microseconds: 2^51, about 2.25e15 (for example a million per 30
	// minutes, or 25,000 per day).
	MaxProduct = 1 << 51
	// maxNowMicros bounds the decision time: 2^52 µs after the epoch, in the year 2112.
	maxNowMicros = 1 << 52
)

// params is one algorithm in the script's units.
type params struct {
	kind     kind
	limit    int64
	burst    int64
	windowUS int64
}

func kindOf(name string) (kind, bool) {
	switch name {
	case algorithm.NameTokenBucket:
		return kindTokenBucket, true
	case algorithm.NameLeakyBucket:
		return kindLeakyBucket, true
	case algorithm.NameFixedWindow:
		return kindFixedWindow, true
	case algorithm.NameSlidingLog:
		return kindSlidingLog, true
	case algorithm.NameSlidingWindow:
		return kindSlidingWindow, true
	}
	return 0, false
}

func unsupported(rule, field, value, why string) error {
	return &CheckError{Rule: rule, Field: field, Value: value, Err: fmt.Errorf("%w: %s", ErrUnsupported, why)}
}

// paramsOf returns a's parameters in the script's units, or a *CheckError when the script cannot
// decide a exactly.
func paramsOf(rule string, a algorithm.Algorithm) (params, error) {
	k, ok := kindOf(a.Name())
	if !ok {
		return params{}, unsupported(rule, "algorithm", a.Name(), "not one of "+fmt.Sprint(algorithm.Names()))
	}
	w := a.Window()
	if w <= 0 || w%time.Microsecond != 0 {
		return params{}, unsupported(rule, "window", w.String(), "must be a positive whole number of microseconds")
	}
	if w > MaxWindow {
		return params{}, unsupported(rule, "window", w.String(), fmt.Sprintf("exceeds %v", MaxWindow))
	}
	p := params{kind: k, limit: a.Limit(), burst: a.Burst(), windowUS: int64(w / time.Microsecond)}
	if p.limit < 1 || p.limit > MaxCount {
		return params{}, unsupported(rule, "limit", fmt.Sprint(p.limit), "must be between 1 and 2^51")
	}
	if p.burst < 1 || p.burst > MaxCount {
		return params{}, unsupported(rule, "burst", fmt.Sprint(p.burst), "must be between 1 and 2^51")
	}
	switch k {
	case kindTokenBucket, kindLeakyBucket:
		if p.burst > MaxProduct/p.windowUS {
			return params{}, unsupported(rule, "burst*window", fmt.Sprintf("%d*%dµs", p.burst, p.windowUS),
				"exceeds 2^51 (microseconds): lower the burst or the window")
		}
	case kindSlidingWindow:
		if p.limit > MaxProduct/p.windowUS {
			return params{}, unsupported(rule, "limit*window", fmt.Sprintf("%d*%dµs", p.limit, p.windowUS),
				"exceeds 2^51 (microseconds): lower the limit or the window, or use another algorithm")
		}
	}
	return p, nil
}

// Supports reports whether the store decides a exactly, and if not returns a *CheckError saying
// which bound it breaks (see the package documentation's "Exact arithmetic").
func Supports(a algorithm.Algorithm) error {
	if a == nil {
		return unsupported("", "algorithm", "nil", "no algorithm")
	}
	_, err := paramsOf("", a)
	return err
}

// ValidateRules checks rules as testserver.ValidateRules does and, in addition, that the store
// decides every quota they define exactly: each rule's and tier's algorithm, and the scaled-up
// quotas of soft and elastic mode. Errors are *testserver.RuleError or *CheckError. Call it at
// startup to reject what Apply would otherwise refuse request by request.
func ValidateRules(rules []testserver.Rule) error {
	l, err := testserver.NewLimiter(rules)
	if err != nil {
		return err
	}
	defer l.Close()
	for _, r := range l.Rules() {
		if err := validateQuota(r, r.Limit, r.Window, r.Burst, r.Ceiling); err != nil {
			return err
		}
		for key, t := range r.Tiers {
			limit, window, burst, ceiling := t.Limit, t.Window, t.Burst, t.Ceiling
			if limit == 0 {
				limit = r.Limit
			}
			if window == 0 {
				window = r.Window
			}
			if r.Mode == testserver.ModeElastic && ceiling == 0 {
				ceiling = max(limit+1, mulDiv(r.Ceiling, limit, r.Limit))
			}
			if err := validateQuota(r, limit, window, burst, ceiling); err != nil {
				var ce *CheckError
				if errors.As(err, &ce) {
					ce.Field = "tiers[" + key + "]." + ce.Field
				}
				return err
			}
		}
	}
	return nil
}

// validateQuota builds one quota's algorithms as the testserver does and checks each.
func validateQuota(r testserver.Rule, limit int64, window time.Duration, burst, ceiling int64) error {
	base, err := algorithm.New(r.Algorithm, algorithm.Config{Limit: limit, Window: window, Burst: burst})
	if err != nil {
		return &CheckError{Rule: r.Name, Field: "algorithm", Value: r.Algorithm, Err: err}
	}
	algs := []algorithm.Algorithm{base}
	switch r.Mode {
	case testserver.ModeSoft:
		if soft := mulDiv(limit, 100+r.SoftPercent, 100); soft > limit {
			a, err := algorithm.Scale(base, soft)
			if err != nil {
				return &CheckError{Rule: r.Name, Field: "soft_percent", Value: fmt.Sprint(r.SoftPercent), Err: err}
			}
			algs = append(algs, a)
		}
	case testserver.ModeElastic:
		a, err := algorithm.Scale(base, ceiling)
		if err != nil {
			return &CheckError{Rule: r.Name, Field: "ceiling", Value: fmt.Sprint(ceiling), Err: err}
		}
		algs = append(algs, a)
	}
	for _, a := range algs {
		if _, err := paramsOf(r.Name, a); err != nil {
			return err
		}
	}
	return nil
}

// mulDiv returns a*b/c rounded down, saturating instead of overflowing (c > 0).
func mulDiv(a, b, c int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b / c
}
