package testserver

import (
	"sync/atomic"
	"time"
)

// anchorPeriod is how often the default clock reads the wall clock in full: the longest a step of
// the system clock (settimeofday, an NTP step) goes unnoticed by the limiter. A second is far
// below any quota's window that a step could matter to, and makes the full read's cost (and its
// one allocation) vanish next to the decisions in between.
const anchorPeriod = time.Second

// systemClock is the limiter's default clock: the wall clock, as time.Now reads it, read in full at
// most once per anchorPeriod (the anchor) and advanced in between by the monotonic clock alone.
//
// Why: on a virtual machine time.Now costs two clock reads, the wall clock and the monotonic clock
// (about 50 ns each on kvm-clock, as much as the rest of a decision), while time.Since on a time
// that carries a monotonic reading costs one. The kernel slews both clocks alike, so the times it
// returns are time.Now's to within the few nanoseconds between time.Now's own two reads, except
// after a step of the system clock, which they follow within anchorPeriod. Between two anchors they
// never go backwards; across a re-anchor they can, by as much as the clock stepped back, as
// time.Now's wall reading can (the algorithms count a late caller at the time they last counted).
//
// Inside a testing/synctest bubble time.Now carries no monotonic reading and time.Since measures
// with time.Now: the clock then returns the bubble's time.Now exactly, whether the anchor was read
// inside the bubble or out of it. It is safe for concurrent use.
type systemClock struct {
	anchor atomic.Pointer[clockAnchor]
}

// clockAnchor is one full reading of the wall clock.
type clockAnchor struct {
	t    time.Time // as time.Now returned it, with its monotonic reading
	sec  int64     // t.Unix()
	nsec int64     // t.Nanosecond()
}

// now returns the current time. It carries no monotonic reading (its Sub and comparisons use the
// wall reading, which the monotonic clock advanced).
func (c *systemClock) now() time.Time {
	if a := c.anchor.Load(); a != nil {
		if d := time.Since(a.t); d >= 0 && d < anchorPeriod {
			// time.Unix with nanoseconds in [0, 1e9), which it takes without a division, rather
			// than a.t.Add(d), which costs three times as much. anchorPeriod is at most a second.
			sec, nsec := a.sec, a.nsec+int64(d)
			if nsec >= int64(time.Second) {
				sec, nsec = sec+1, nsec-int64(time.Second)
			}
			return time.Unix(sec, nsec)
		}
	}
	t := time.Now()
	c.anchor.Store(anchorAt(t))
	return t
}

// anchorAt returns the anchor of the reading t.
func anchorAt(t time.Time) *clockAnchor {
	return &clockAnchor{t: t, sec: t.Unix(), nsec: int64(t.Nanosecond())}
}
