package ratelimitheader

import (
	"math/bits"
	"time"
)

// maxExactWindowSeconds bounds the window scaleWindow picks for an exact q/w pair (24h).
const maxExactWindowSeconds = int64(MaxDelay / time.Second)

// scaleWindow expresses limit per window as q per w whole seconds with the same rate, as RateLimit-Policy
// requires integer seconds. limit must be in (0, maxSFInteger] and window > 0.
//
// The rule: limit/window reduced to lowest terms a/b in requests per second gives q = a, w = b, the
// smallest whole-second window that holds a whole quota (10 per 100ms: q=100;w=1; 2 per 1.5s: q=4;w=3;
// a whole-second window is kept as is). When w would exceed 24h or q would exceed maxSFInteger, it
// falls back to w = ceil(window) and q = floor(limit*w/window), a rate never above the real one.
func scaleWindow(limit int64, window time.Duration) (q, w int64) {
	ns := int64(window)
	const sec = int64(time.Second)
	if ns%sec == 0 {
		return limit, min(ns/sec, maxSFInteger)
	}
	g := gcd(limit, ns)
	q1, w1 := limit/g, ns/g // limit/window = q1/w1 per nanosecond, in lowest terms
	g2 := gcd(sec, w1)
	mult, b := sec/g2, w1/g2 // rate per second = q1*mult / b, in lowest terms
	if b <= maxExactWindowSeconds && q1 <= maxSFInteger/mult {
		return q1 * mult, b
	}
	w = ns/sec + 1 // ceil: ns is not a whole number of seconds
	hi, lo := bits.Mul64(uint64(limit), uint64(w)*uint64(sec))
	if hi >= uint64(ns) {
		return maxSFInteger, min(w, maxSFInteger)
	}
	quo, _ := bits.Div64(hi, lo, uint64(ns))
	return int64(min(quo, maxSFInteger)), min(w, maxSFInteger)
}

// gcd returns the greatest common divisor of two positive integers.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
