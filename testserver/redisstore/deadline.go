package redisstore

import (
	"context"
	"sync"
	"time"
)

// deadlineCtx is a round trip's context: context.WithTimeout(context.Background(), d) without its
// cost on the usual path. A client that honours context deadlines (ContextTimeoutEnabled) reads
// Deadline to set its connection's deadlines, and asks for Done once per command without waiting
// on it (go-redis polls it before taking a connection from its pool); it waits on Done only where
// it waits for something else (a free connection, a dial). So the channel is made on the first
// call of Done, and no context has a timer of its own: the contexts whose Done was asked for wait
// in their store's deadlines, whose one timer closes each channel at its deadline. A round trip
// then costs two allocations (the context, its channel) instead of five and no timer of its own.
// Safe for concurrent use, as a context must be.
type deadlineCtx struct {
	at time.Time
	w  *deadlines

	// Guarded by w.mu.
	done       chan struct{} // made on demand; closed when err is set
	err        error
	prev, next *deadlineCtx // in w's list while done is open
	listed     bool
}

var _ context.Context = (*deadlineCtx)(nil)

// deadlines closes the Done channels of one store's round-trip contexts at their deadlines with
// one timer: the contexts whose Done is open wait in a list ordered by deadline, and the timer is
// set for the first of them. A context leaves the list when it ends (cancel, or the deadline), and
// the timer is left as it is then: when it fires it ends the contexts past their deadline and is
// set again for the first one left, if any. One store's round trips all have the same timeout, so
// a new context's deadline is the latest (it joins at the end of the list, and the timer needs no
// change), and a busy store's timer fires about once per timeout instead of being set and stopped
// on every round trip. The zero value is ready to use. Safe for concurrent use.
type deadlines struct {
	mu          sync.Mutex
	first, last *deadlineCtx
	timer       *time.Timer // made on first use; fires at armed
	armed       time.Time   // zero when the timer is not set
}

// start returns a context that ends d from now, as context.WithTimeout(context.Background(), d)
// does; its cancel method is the CancelFunc.
func (w *deadlines) start(d time.Duration) *deadlineCtx {
	return &deadlineCtx{at: time.Now().Add(d), w: w}
}

// addLocked puts c in the list by its deadline and sets the timer if c is due before it fires.
func (w *deadlines) addLocked(c *deadlineCtx) {
	p := w.last
	for p != nil && p.at.After(c.at) {
		p = p.prev
	}
	c.prev, c.listed = p, true
	if p == nil {
		c.next, w.first = w.first, c
	} else {
		c.next, p.next = p.next, c
	}
	if c.next == nil {
		w.last = c
	} else {
		c.next.prev = c
	}
	if w.armed.IsZero() || c.at.Before(w.armed) {
		w.armLocked(c.at)
	}
}

// removeLocked takes c out of the list.
func (w *deadlines) removeLocked(c *deadlineCtx) {
	if c.prev == nil {
		w.first = c.next
	} else {
		c.prev.next = c.next
	}
	if c.next == nil {
		w.last = c.prev
	} else {
		c.next.prev = c.prev
	}
	c.prev, c.next, c.listed = nil, nil, false
}

// armLocked sets the timer to fire at at.
func (w *deadlines) armLocked(at time.Time) {
	w.armed = at
	d := time.Until(at)
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.fire)
		return
	}
	w.timer.Reset(d)
}

// fire ends the contexts past their deadline and sets the timer for the next one.
func (w *deadlines) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = time.Time{}
	now := time.Now()
	for w.first != nil && !now.Before(w.first.at) {
		w.first.endLocked(context.DeadlineExceeded)
	}
	if w.first != nil {
		w.armLocked(w.first.at)
	}
}

// Deadline implements context.Context.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

// Value implements context.Context: the context carries no values.
func (c *deadlineCtx) Value(any) any { return nil }

// Done implements context.Context: the channel is closed at the deadline or by cancel. A context
// asked for Done when its deadline has passed already is closed by the timer, set to fire at once,
// rather than by reading the clock here on every call (go-redis asks on every command; the clock
// costs a VM tens of nanoseconds a read): Err, which reads it, ends such a context at once too.
func (c *deadlineCtx) Done() <-chan struct{} {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		} else {
			c.w.addLocked(c)
		}
	}
	return c.done
}

// Err implements context.Context: context.DeadlineExceeded from the deadline on,
// context.Canceled after cancel, nil before either.
func (c *deadlineCtx) Err() error {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.err == nil && !time.Now().Before(c.at) {
		c.endLocked(context.DeadlineExceeded)
	}
	return c.err
}

// cancel ends the context with context.Canceled unless it has ended already, as the CancelFunc
// of context.WithTimeout does.
func (c *deadlineCtx) cancel() {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	c.endLocked(context.Canceled)
}

// endLocked ends the context with err unless it has ended already.
func (c *deadlineCtx) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.listed {
		c.w.removeLocked(c)
	}
	if c.done != nil {
		close(c.done)
	}
}
