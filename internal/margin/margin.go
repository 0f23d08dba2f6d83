// Package margin applies a safety margin to a pace a client was told (examples/batch and
// examples/goodput share it, so "told the rate less the margin" means the same in both): rates and
// bursts shrink by the margin m, windows stretch by it. The functions are pure and safe for
// concurrent use; m is in [0, 1).
package margin

import (
	"math"
	"time"
)

// maxBurst bounds Burst's result: more than any API grants at once, and far from int overflow.
const maxBurst = math.MaxInt32

// Rate returns r×(1−m).
func Rate(r, m float64) float64 { return r * (1 - m) }

// Burst returns ⌊b×(1−m)⌋, at least 1 and at most math.MaxInt32. A product that float64 leaves a
// hair under a whole number counts as that number (200×0.995 is 199, not 198).
func Burst(b int64, m float64) int {
	f := math.Floor(float64(b)*(1-m) + 1e-9)
	return int(max(1, min(f, maxBurst)))
}

// Window returns w/(1−m), rounded up to the nanosecond, at most the longest time.Duration.
func Window(w time.Duration, m float64) time.Duration {
	f := math.Ceil(float64(w) / (1 - m))
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(f)
}
