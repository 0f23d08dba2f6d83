package algorithm

import (
	"math"
	"time"
)

// The algorithms work on integer nanoseconds since the Unix epoch. Times before the epoch are treated
// as the epoch and times after the last representable instant (year 2262), math.MaxInt64 nanoseconds,
// as that instant, so no input time can overflow the arithmetic; in practice the clamp never applies
// to a server's clock. maxSec and maxNsec are that instant in seconds and nanoseconds.
const (
	maxSec  = math.MaxInt64 / int64(time.Second)
	maxNsec = math.MaxInt64 % int64(time.Second)
)

// nanos returns t as nanoseconds since the Unix epoch, clamped to [0, math.MaxInt64]: t.UnixNano()
// with the clamp, computed from t's seconds (comparing t with two time.Time bounds cost a call
// each, a tenth of a decision).
func nanos(t time.Time) int64 {
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	switch {
	case sec < 0:
		return 0
	case sec > maxSec, sec == maxSec && nsec > maxNsec:
		return math.MaxInt64
	}
	return sec*int64(time.Second) + nsec
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
