package redisstore

import (
	"sync"
	"sync/atomic"
	"time"
)

// Circuit states, as SharedStats.Circuit reports them.
const (
	circuitClosed  = "closed"
	circuitOpen    = "open"
	circuitProbing = "probing"
)

// circuit keeps the store off Redis while Redis is failing, so that a dead or hanging Redis costs
// one deadline per retry interval instead of one per request. It reads the real clock (time.Now),
// never the caller's. Safe for concurrent use.
//
// Latency is not failure: a slow round trip that still answers is a success. A failed round trip
// (an error, or no answer within the deadline) opens the circuit only when Redis has been failing
// for a whole failure window with no success in between, or at once when the connection was
// refused (nobody listens: waiting cannot help). Its decisions are decided by policy either way;
// the window only decides whether the requests after it still try Redis.
//
// Open, it stays open for the retry interval; then the first caller wins a compare-and-swap that
// pushes openUntil another interval ahead and probes Redis alone (the others keep deciding by
// policy); a success closes the circuit, a failure keeps it open.
type circuit struct {
	interval time.Duration // how long it stays open
	window   time.Duration // how long failures must persist before it opens

	openUntil atomic.Int64 // Unix nanoseconds; 0 when closed
	opened    atomic.Int64 // times it opened: a generation number
	failing   atomic.Bool  // a failure streak is running (failingSince is set)
	probing   atomic.Bool  // a call allowed after the interval is testing Redis

	mu           sync.Mutex // serialises success and failure
	failingSince time.Time
}

// allow reports whether a call may go to Redis now. A closed circuit does not read the clock.
func (c *circuit) allow() bool {
	u := c.openUntil.Load()
	if u == 0 {
		return true
	}
	now := time.Now()
	if now.UnixNano() < u {
		return false
	}
	if !c.openUntil.CompareAndSwap(u, now.Add(c.interval).UnixNano()) {
		return false
	}
	c.probing.Store(true)
	return true
}

// generation returns how many times the circuit has opened.
func (c *circuit) generation() int64 { return c.opened.Load() }

// reopenedSince reports whether the circuit opened after generation gen and is open now: a call
// allowed before that should not go to Redis any more. It reads the clock only after an opening.
func (c *circuit) reopenedSince(gen int64) bool {
	return c.opened.Load() != gen && time.Now().UnixNano() < c.openUntil.Load()
}

// success ends any failure streak and closes the circuit.
func (c *circuit) success() {
	if !c.failing.Load() && c.openUntil.Load() == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failing.Store(false)
	c.probing.Store(false)
	c.failingSince = time.Time{}
	c.openUntil.Store(0)
}

// failure records a failed round trip that ended at now and reports whether it opened the
// circuit: at once when refused, when a probe failed (the circuit was open), or when failures have
// persisted for the window.
func (c *circuit) failure(now time.Time, refused bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.failing.Load() {
		c.failing.Store(true)
		c.failingSince = now
	}
	if !refused && c.openUntil.Load() == 0 && now.Sub(c.failingSince) < c.window {
		return false
	}
	c.probing.Store(false)
	c.openUntil.Store(now.Add(c.interval).UnixNano())
	c.opened.Add(1)
	return true
}

// state returns the circuit's state, for SharedStats.
func (c *circuit) state() string {
	switch {
	case c.openUntil.Load() == 0:
		return circuitClosed
	case c.probing.Load():
		return circuitProbing
	default:
		return circuitOpen
	}
}
