package throttle

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// NewLeakyBucket returns a Limiter that spaces requests evenly, one every 1/ratePerSec, and queues
// up to backlog of them: a request is scheduled at max(now, previous request's time + 1/rate), so
// requests go out in the order of Reserve (and Wait) calls, never two closer than the interval,
// and never in a burst. A request that would have to wait while backlog requests are already
// scheduled and waiting is refused with *BacklogFullError (errors.Is ErrBacklogFull). A backlog of
// 0 means no request ever waits: one that cannot go at once is refused.
//
// When a waiting reservation is cancelled, every reservation behind it moves up by one interval
// (and is told so through Reservation.Changed), so the schedule stays gapless and in order.
//
// Time is kept as integer nanoseconds since the first now the limiter sees, and the interval is
// 1/ratePerSec rounded to the nearest nanosecond. The Limiter is safe for concurrent use.
//
// It returns ErrInvalidRate for a rate that is not positive and finite or above 1e9 per second (an
// interval below one nanosecond), ErrInvalidBacklog for a negative backlog.
func NewLeakyBucket(ratePerSec float64, backlog int) (Limiter, error) {
	if err := checkRate(ratePerSec); err != nil {
		return nil, err
	}
	interval := math.Round(float64(time.Second) / ratePerSec)
	if interval < 1 {
		return nil, fmt.Errorf("%w: got %v (more than one request per nanosecond)", ErrInvalidRate, ratePerSec)
	}
	if interval > math.MaxInt64/2 {
		return nil, fmt.Errorf("%w: got %v (interval too long)", ErrInvalidRate, ratePerSec)
	}
	if backlog < 0 {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidBacklog, backlog)
	}
	return &leakyBucket{interval: int64(interval), backlog: backlog}, nil
}

// leakyBucket schedules requests on an integer clock (nanoseconds since base). Requests whose
// time has not come yet are pending: they sit in a doubly linked list in schedule order, each one
// interval after the one before it.
type leakyBucket struct {
	interval int64
	backlog  int

	mu      sync.Mutex
	started bool      // base is set
	base    time.Time // origin of the integer clock: the first now seen
	hasLast bool
	last    int64 // time of the latest request that has come due
	head    *leakyReservation
	tail    *leakyReservation
	pending int // length of the list
}

type leakyReservation struct {
	b          *leakyBucket
	slot       int64 // guarded by b.mu, as are the fields below
	prev, next *leakyReservation
	inList     bool
	changed    chan struct{}
}

// clock converts now to the integer clock; b.mu is held.
func (b *leakyBucket) clock(now time.Time) int64 {
	if !b.started {
		b.started, b.base = true, now
	}
	return int64(now.Sub(b.base)) // Sub saturates, uses the monotonic clock when both have it
}

// settle moves the pending requests that have come due at t out of the list; b.mu is held.
func (b *leakyBucket) settle(t int64) {
	for r := b.head; r != nil && r.slot <= t; r = b.head {
		b.last, b.hasLast = r.slot, true
		b.unlink(r)
	}
}

func (b *leakyBucket) unlink(r *leakyReservation) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		b.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		b.tail = r.prev
	}
	r.prev, r.next, r.inList = nil, nil, false
	b.pending--
}

// Reserve schedules one request at now.
func (b *leakyBucket) Reserve(now time.Time) (Reservation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.clock(now)
	b.settle(t)
	slot := t
	switch {
	case b.tail != nil:
		slot = max(t, addSat(b.tail.slot, b.interval))
	case b.hasLast:
		slot = max(t, addSat(b.last, b.interval))
	}
	if slot <= t {
		b.last, b.hasLast = slot, true
		return dueReservation{}, nil
	}
	if b.pending >= b.backlog {
		return nil, &BacklogFullError{Backlog: b.backlog, Wait: time.Duration(slot - t)}
	}
	r := &leakyReservation{b: b, slot: slot, prev: b.tail, inList: true}
	if b.tail != nil {
		b.tail.next = r
	} else {
		b.head = r
	}
	b.tail = r
	b.pending++
	return r, nil
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (r *leakyReservation) Delay(now time.Time) time.Duration {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Duration(max(0, r.slot-b.clock(now)))
}

func (r *leakyReservation) Changed() <-chan struct{} {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if !r.inList {
		return nil // due or cancelled: it will not move again
	}
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Cancel takes a pending reservation out of the schedule. Every pending reservation was scheduled
// exactly one interval after its predecessor (or after the last due request), and all of them
// arrived before the cancelled one's time, so removing it moves each one behind it up by exactly
// one interval.
func (r *leakyReservation) Cancel(now time.Time) {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.settle(b.clock(now))
	if !r.inList {
		return
	}
	for x := r.next; x != nil; x = x.next {
		x.slot -= b.interval
		if x.changed != nil {
			close(x.changed)
			x.changed = nil
		}
	}
	b.unlink(r)
}
