package algorithm

import (
	"math"
	"time"
)

// The algorithms work on integer nanoseconds since the Unix epoch. Times before the epoch are treated
// as the epoch and times after the last representable instant (year 2262) as that instant, so no input
// time can overflow the arithmetic; in practice the clamp never applies to a server's clock.
var (
	epoch   = time.Unix(0, 0)
	maxTime = time.Unix(0, math.MaxInt64)
)

// nanos returns t as nanoseconds since the Unix epoch, clamped to [0, math.MaxInt64].
func nanos(t time.Time) int64 {
	if t.Before(epoch) {
		return 0
	}
	if t.After(maxTime) {
		return math.MaxInt64
	}
	return t.UnixNano()
}

// addSat returns a+b for non-negative a and b, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// until returns the duration from now to the instant at (both in nanoseconds, at >= now >= 0).
func until(at, now int64) time.Duration {
	if at <= now {
		return 0
	}
	return time.Duration(at - now)
}

// floorTo returns the start of the epoch-aligned window of length w containing t (t >= 0).
func floorTo(t, w int64) int64 { return t - t%w }

// atLeastOne is the request count the algorithms use for n: requests are counted in whole units and
// a request of cost zero or below is charged as one.
func atLeastOne(n int64) int64 {
	if n < 1 {
		return 1
	}
	return n
}
