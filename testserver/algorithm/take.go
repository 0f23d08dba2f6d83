package algorithm

import "time"

// Take decides n requests at now against s into d, as a.Decide does, and when they are admitted
// records them in s, as a.Commit does. It is the two calls in one, for a caller that has nothing
// to decide between them (a store deciding one limit alone): the algorithms of this package then
// read the State once (the sliding log searches its ring once) and are called without an
// interface. For an Algorithm from elsewhere it calls Decide and Commit. The same State rules
// apply: s must not be used concurrently.
//
// It writes the Decision where the caller keeps it rather than returning it: a Decision is too
// large for the compiler to keep in registers, so a returned one is stored to a temporary and
// copied, and copying a Decision just written field by field stalls the processor (the copy's
// 16-byte loads cannot be forwarded from the 8-byte stores), a tenth of a store's decision.
func Take(a Algorithm, s *State, now time.Time, n int64, d *Decision) {
	*d = Decision{}
	switch a := a.(type) {
	case *tokenBucket:
		a.take(d, s, now, n, false)
	case *leakyBucket:
		a.take(d, s, now, n, true)
	case *fixedWindow:
		a.take(d, s, now, n)
	case *slidingWindow:
		a.take(d, s, now, n)
	case *slidingLog:
		a.take(d, s, now, n)
	default:
		if *d = a.Decide(s, now, n); d.Allowed {
			a.Commit(s, now, n)
		}
	}
}
