package retry

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// newSchedule returns the exponential schedule of one logical request: base, 2·base, 4·base, ...
// capped at max, without randomisation (the jitter is applied by fullJitter) and without an elapsed
// limit (the Transport bounds the elapsed time from the first attempt itself).
func newSchedule(base, max time.Duration) *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     base,
		RandomizationFactor: 0,
		Multiplier:          2,
		MaxInterval:         max,
		MaxElapsedTime:      0,
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}
	b.Reset()
	return b
}

// fullJitter draws a wait uniformly from [0, interval] ("full jitter": clients that failed together
// spread over the whole interval).
func fullJitter(interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	if interval == math.MaxInt64 {
		return time.Duration(rand.Int64()) // [0, MaxInt64]: interval+1 would overflow
	}
	return time.Duration(rand.Int64N(int64(interval) + 1))
}

// AddJitter returns a duration drawn uniformly from [d, d·(1+f)]: jitter that only adds, never
// shortens d. It is how the Transport waits out a Retry-After of d with WithRetryAfterJitter(f).
// A negative d counts as 0; f outside [0, 1] is clamped to it. It is safe for concurrent use.
func AddJitter(d time.Duration, f float64) time.Duration {
	if d <= 0 {
		return 0
	}
	if !(f > 0) { // also NaN
		return d
	}
	f = min(f, 1)
	span := time.Duration(float64(d) * f)
	if span <= 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(int64(span)+1))
}
