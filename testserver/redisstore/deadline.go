package redisstore

import (
	"context"
	"sync"
	"time"
)

// deadlineCtx is a round trip's context: context.WithTimeout(context.Background(), d) without its
// cost on the usual path. A client that honours context deadlines (ContextTimeoutEnabled) reads
// only Deadline while Redis answers, to set its connection's deadlines; Done is asked for only
// where it waits for something else (a free connection, a dial). So the channel, and the timer that
// closes it at the deadline, are made on the first call of Done (or of Err past the deadline), and
// a round trip that never needs them costs one allocation instead of four and no timer. Safe for
// concurrent use, as a context must be.
type deadlineCtx struct {
	at time.Time

	mu    sync.Mutex
	done  chan struct{} // made on demand; closed when err is set
	timer *time.Timer
	err   error
}

var _ context.Context = (*deadlineCtx)(nil)

// withDeadline returns a context that ends d from now, and its cancel function, as
// context.WithTimeout(context.Background(), d) does.
func withDeadline(d time.Duration) (*deadlineCtx, context.CancelFunc) {
	c := &deadlineCtx{at: time.Now().Add(d)}
	return c, c.cancel
}

// Deadline implements context.Context.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

// Value implements context.Context: the context carries no values.
func (c *deadlineCtx) Value(any) any { return nil }

// Done implements context.Context: the channel is closed at the deadline or by cancel.
func (c *deadlineCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		} else if d := time.Until(c.at); d <= 0 {
			c.endLocked(context.DeadlineExceeded)
		} else {
			c.timer = time.AfterFunc(d, func() { c.end(context.DeadlineExceeded) })
		}
	}
	return c.done
}

// Err implements context.Context: context.DeadlineExceeded from the deadline on,
// context.Canceled after cancel, nil before either.
func (c *deadlineCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !time.Now().Before(c.at) {
		c.endLocked(context.DeadlineExceeded)
	}
	return c.err
}

func (c *deadlineCtx) cancel() { c.end(context.Canceled) }

func (c *deadlineCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

// endLocked ends the context with err unless it has ended already.
func (c *deadlineCtx) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.done != nil {
		close(c.done)
	}
}
