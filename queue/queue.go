package queue

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Queue admits requests: at most a fixed number hold a place at once, the others wait in a bounded
// line, served in FIFO order within a priority class (see the package documentation for the order
// and the anti-starvation rule).
//
// Create a Queue with New; the zero value is not usable (a nil *Queue returns ErrNilQueue). A Queue is
// safe for concurrent use by any number of goroutines. It starts no goroutines.
type Queue struct {
	maxInFlight int // 0 = unlimited
	maxWaiting  int
	starvation  int
	onWait      func(req *http.Request, waited time.Duration)

	mu       sync.Mutex
	closed   bool
	inFlight int
	waiting  int
	lines    [numClasses]line
	// passed[c] counts the places given in a row to classes more important than c while c had
	// someone waiting; it is reset when c is served or its line empties.
	passed    [numClasses]int
	admitted  uint64
	refused   uint64
	cancelled uint64
}

// New returns a Queue configured by opts (see the options for their defaults). It returns an
// *OptionError, matchable with errors.Is(err, ErrInvalidOption), when an option value is out of range.
// Nil options are ignored.
func New(opts ...Option) (*Queue, error) {
	c := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &Queue{maxInFlight: c.maxInFlight, maxWaiting: c.maxWaiting, starvation: c.starvation, onWait: c.onWait}, nil
}

// Acquire waits for a place for one request with the priority carried by ctx (see WithPriority;
// Normal when none) and returns the function that gives the place back.
//
// It checks ctx first. When there is a free place and nobody waits, it returns at once. Otherwise it
// joins the line and waits until it is served, ctx ends, or the queue is closed. It returns
// ErrQueueFull when the line is full, ErrClosed after Close, ctx.Err() when ctx ends first (the
// request leaves the line at once; a place granted at that same moment passes to the next waiter),
// and ErrInvalidPriority for a priority outside High, Normal and Low.
//
// release is idempotent and safe to call from any goroutine; only its first call gives the place
// back. On error no place is held and release is a no-op, never nil.
func (q *Queue) Acquire(ctx context.Context) (release func(), err error) {
	if err := q.acquire(ctx); err != nil {
		return func() {}, err
	}
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			q.release()
		}
	}, nil
}

// acquire takes a place for one request; the caller must call release exactly once on success.
func (q *Queue) acquire(ctx context.Context) error {
	_, err := q.acquireWaited(ctx)
	return err
}

// acquireWaited is acquire that also reports whether the request had to wait in line.
func (q *Queue) acquireWaited(ctx context.Context) (waited bool, err error) {
	if q == nil {
		return false, ErrNilQueue
	}
	if ctx == nil {
		return false, ErrNilContext
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	p := PriorityFromContext(ctx)
	if !p.valid() {
		return false, fmt.Errorf("%w: %v", ErrInvalidPriority, p)
	}

	q.mu.Lock()
	if q.closed {
		q.refused++
		q.mu.Unlock()
		return false, ErrClosed
	}
	if q.waiting == 0 && q.hasRoomLocked() {
		q.inFlight++
		q.admitted++
		q.mu.Unlock()
		return false, nil
	}
	if q.waiting >= q.maxWaiting {
		q.refused++
		q.mu.Unlock()
		return false, ErrQueueFull
	}
	w := &waiter{ready: make(chan struct{}), class: p.class()}
	q.lines[w.class].push(w)
	q.waiting++
	q.mu.Unlock()

	select {
	case <-w.ready:
		// w.state was written before ready was closed, so it is safe to read here.
		if w.state == stateClosed {
			return false, ErrClosed
		}
		// Served, but ctx may have ended meanwhile: a cancelled request does not proceed.
		if err := ctx.Err(); err != nil {
			q.mu.Lock()
			q.admitted--
			q.cancelled++
			q.releaseLocked()
			q.mu.Unlock()
			return false, err
		}
		return true, nil
	case <-ctx.Done():
		q.mu.Lock()
		switch w.state {
		case stateWaiting:
			q.removeLocked(w)
			q.cancelled++
		case stateGranted:
			// Granted concurrently with the cancellation: pass the place on.
			q.admitted--
			q.cancelled++
			q.releaseLocked()
		case stateClosed:
			q.mu.Unlock()
			return false, ErrClosed
		}
		q.mu.Unlock()
		return false, ctx.Err()
	}
}

// hasRoomLocked reports whether a place is free. q.mu must be held.
func (q *Queue) hasRoomLocked() bool {
	return q.maxInFlight == 0 || q.inFlight < q.maxInFlight
}

// removeLocked takes a waiting w out of its line. q.mu must be held.
func (q *Queue) removeLocked(w *waiter) {
	l := &q.lines[w.class]
	l.remove(w)
	q.waiting--
	if l.n == 0 {
		q.passed[w.class] = 0
	}
}

// release gives one place back.
func (q *Queue) release() {
	q.mu.Lock()
	q.releaseLocked()
	q.mu.Unlock()
}

// releaseLocked gives one place back and hands it to the next waiter, if any. q.mu must be held.
func (q *Queue) releaseLocked() {
	if q.inFlight > 0 {
		q.inFlight--
	}
	if q.waiting == 0 || !q.hasRoomLocked() {
		return
	}
	w := q.nextLocked()
	w.state = stateGranted
	q.inFlight++
	q.admitted++
	close(w.ready)
}

// nextLocked removes and returns the waiter to serve next, applying the priority order and the
// anti-starvation rule, and updates the passed-over counts. There must be a waiter; q.mu must be held.
func (q *Queue) nextLocked() *waiter {
	chosen := -1
	// A class passed over K times in a row goes first; the least important such class before others.
	for c := numClasses - 1; c > 0; c-- {
		if q.lines[c].n > 0 && q.passed[c] >= q.starvation {
			chosen = c
			break
		}
	}
	if chosen < 0 {
		for c := range numClasses {
			if q.lines[c].n > 0 {
				chosen = c
				break
			}
		}
	}
	for c := chosen + 1; c < numClasses; c++ {
		if q.lines[c].n > 0 {
			q.passed[c]++
		}
	}
	q.passed[chosen] = 0
	w := q.lines[chosen].pop()
	q.waiting--
	return w
}

// Stats returns a consistent snapshot of the queue's live figures. A nil *Queue reports zeros.
func (q *Queue) Stats() Stats {
	if q == nil {
		return Stats{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return Stats{
		Waiting:   q.waiting,
		InFlight:  q.inFlight,
		Admitted:  q.admitted,
		Refused:   q.refused,
		Cancelled: q.cancelled,
	}
}

// Close refuses every later Acquire with ErrClosed and wakes every waiter with ErrClosed. Requests
// already holding a place keep it until they release it. Close is idempotent, safe to call
// concurrently, and always returns nil (it satisfies io.Closer).
func (q *Queue) Close() error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	for c := range q.lines {
		for w := q.lines[c].pop(); w != nil; w = q.lines[c].pop() {
			w.state = stateClosed
			q.refused++
			close(w.ready)
		}
		q.passed[c] = 0
	}
	q.waiting = 0
	return nil
}
