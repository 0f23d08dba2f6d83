package redisstore

import (
	"sync/atomic"
	"time"
)

// circuit keeps the store off Redis for a while after a failure, so that a dead or hanging Redis
// costs one deadline per retry interval instead of one per request. It reads the real clock
// (time.Now), never the caller's.
//
// Closed (openUntil 0), every call may go to Redis. After a failure it is open until
// failure+interval; the first caller after that wins a compare-and-swap that pushes openUntil
// another interval ahead and probes Redis alone; a success closes the circuit, a failure keeps
// it open. Safe for concurrent use.
type circuit struct {
	interval  time.Duration
	openUntil atomic.Int64 // Unix nanoseconds; 0 when closed
}

// allow reports whether a call may go to Redis now.
func (c *circuit) allow(now time.Time) bool {
	u := c.openUntil.Load()
	if u == 0 {
		return true
	}
	if now.UnixNano() < u {
		return false
	}
	return c.openUntil.CompareAndSwap(u, now.Add(c.interval).UnixNano())
}

// success closes the circuit.
func (c *circuit) success() {
	if c.openUntil.Load() != 0 {
		c.openUntil.Store(0)
	}
}

// failure opens the circuit for an interval from now.
func (c *circuit) failure(now time.Time) { c.openUntil.Store(now.Add(c.interval).UnixNano()) }
