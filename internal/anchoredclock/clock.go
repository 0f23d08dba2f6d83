// Package anchoredclock reads the present at the cost of the monotonic clock alone: the wall clock
// is read in full once per Period (the anchor) and advanced in between by the monotonic clock.
//
// Why: on a virtual machine time.Now costs two clock reads, the wall clock and the monotonic clock
// (about 55 ns together on kvm-clock, where time.Since costs 30 ns), as much as the rest of a
// decision of testserver's limiter, or a tenth of the client stack's cost per request. The kernel
// slews both clocks alike, so the times a Clock returns are time.Now's to within the few
// nanoseconds between time.Now's own two reads, except after a step of the system clock
// (settimeofday, an NTP step, a resume from suspend), which they follow within Period. Between two
// anchors they never go backwards; across a re-anchor their wall reading can, by as much as the
// clock stepped back, as time.Now's can.
//
// Inside a testing/synctest bubble time.Now carries no monotonic reading and time.Since measures
// with time.Now: a Clock then returns the bubble's time.Now exactly, whether its anchor was read
// inside the bubble or out of it.
package anchoredclock

import (
	"sync/atomic"
	"time"
)

// Period is how often a Clock reads the wall clock in full: the longest a step of the system clock
// goes unnoticed. A second is far below any quota's window that a step could matter to, and makes
// the full read's cost (and its one allocation) vanish next to the readings in between.
const Period = time.Second

// Clock reads the present; the zero value is ready to use. It is safe for concurrent use.
type Clock struct {
	anchor atomic.Pointer[anchor]
}

// anchor is one full reading of the wall clock.
type anchor struct {
	t    time.Time // as time.Now returned it, with its monotonic reading
	sec  int64     // t.Unix()
	nsec int64     // t.Nanosecond()
}

// anchorAt returns the anchor of the reading t.
func anchorAt(t time.Time) *anchor {
	return &anchor{t: t, sec: t.Unix(), nsec: int64(t.Nanosecond())}
}

// Now returns the present with a monotonic reading, as time.Now does: compared with any other
// time that carries one (time.Now's, in the same process), it is ordered by the monotonic clock.
func (c *Clock) Now() time.Time {
	if a, d, ok := c.fresh(); ok {
		return a.t.Add(d)
	}
	return c.reanchor()
}

// Wall returns the present without a monotonic reading (its Sub and comparisons use the wall
// reading, which the monotonic clock advanced since the anchor). It costs less than Now: a third
// of it goes to time.Add.
func (c *Clock) Wall() time.Time {
	if a, d, ok := c.fresh(); ok {
		// time.Unix with nanoseconds in [0, 1e9), which it takes without a division, rather than
		// a.t.Add(d), which costs three times as much. Period is at most a second.
		sec, nsec := a.sec, a.nsec+int64(d)
		if nsec >= int64(time.Second) {
			sec, nsec = sec+1, nsec-int64(time.Second)
		}
		return time.Unix(sec, nsec)
	}
	return c.reanchor()
}

// fresh returns the anchor and the time since it, if it is younger than Period.
func (c *Clock) fresh() (*anchor, time.Duration, bool) {
	if a := c.anchor.Load(); a != nil {
		if d := time.Since(a.t); d >= 0 && d < Period {
			return a, d, true
		}
	}
	return nil, 0, false
}

// reanchor reads the wall clock in full, keeps it as the anchor and returns it.
func (c *Clock) reanchor() time.Time {
	t := time.Now()
	c.anchor.Store(anchorAt(t))
	return t
}
