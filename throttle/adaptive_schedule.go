package throttle

import "time"

// pacer is the scheduler under an Adaptive limiter: an even spacing of one request per interval,
// in the order of Reserve calls, on an integer clock (nanoseconds since the first now it sees),
// like the leaky bucket's, but with an interval that can change at any time, and a burst
// allowance that lets requests go at once while it lasts. Requests whose time has not come are
// pending in a doubly linked list in schedule order; when the interval changes, the allowance is
// granted, or a pending request is cancelled, the list is scheduled again and every reservation
// that moved is told through its Changed channel. The pacer is not safe for concurrent use:
// Adaptive guards it with its mutex.
type pacer struct {
	interval int64 // spacing in nanoseconds; 0 means no spacing
	// burst is how many requests may still go at once, ahead of the spacing (the allowance); each
	// one that does spends one. The spacing resumes from the last of them.
	burst int64
	// hold is when the next request may go at the earliest (the reset of an exhausted window);
	// 0 when there is no hold.
	hold int64

	hasLast bool
	last    int64 // slot of the latest request that has come due

	head, tail *adaptiveReservation
	pending    int

	// sent is called, in schedule order, with the slot of each request as it comes due.
	sent func(slot int64)
}

// adaptiveReservation is a pending request of an Adaptive limiter. All fields are guarded by the
// limiter's mutex.
type adaptiveReservation struct {
	a          *Adaptive
	slot       int64
	prev, next *adaptiveReservation
	inList     bool
	changed    chan struct{}
}

// next returns the slot the pacer gives a request that arrives at t behind the ones pending.
func (p *pacer) nextSlot(t int64) int64 {
	s := max(t, p.hold)
	switch {
	case p.tail != nil:
		s = max(s, addSat(p.tail.slot, p.interval))
	case p.hasLast:
		s = max(s, addSat(p.last, p.interval))
	}
	return s
}

// settle moves the pending requests that have come due at t out of the list.
func (p *pacer) settle(t int64) {
	for r := p.head; r != nil && r.slot <= t; r = p.head {
		p.markSent(r.slot)
		p.unlink(r)
	}
}

func (p *pacer) markSent(slot int64) {
	p.last, p.hasLast = slot, true
	if p.sent != nil {
		p.sent(slot)
	}
}

// reserve books one request at t: it returns nil when the request may go at once, else the
// pending reservation (linked at the tail).
func (p *pacer) reserve(a *Adaptive, t int64) *adaptiveReservation {
	p.settle(t)
	if p.burst > 0 && p.head == nil {
		p.burst--
		p.markSent(t)
		return nil
	}
	slot := p.nextSlot(t)
	if slot <= t {
		p.markSent(slot)
		return nil
	}
	r := &adaptiveReservation{a: a, slot: slot, prev: p.tail, inList: true}
	if p.tail != nil {
		p.tail.next = r
	} else {
		p.head = r
	}
	p.tail = r
	p.pending++
	return r
}

// reschedule recomputes the slots of every pending request at t from the current interval and
// hold, keeping their order, and wakes the ones that moved.
func (p *pacer) reschedule(t int64) {
	p.settle(t)
	prev, hasPrev := p.last, p.hasLast
	for r := p.head; r != nil; r = r.next {
		s := max(t, p.hold)
		if hasPrev {
			s = max(s, addSat(prev, p.interval))
		}
		if s != r.slot {
			r.slot = s
			r.notify()
		}
		prev, hasPrev = s, true
	}
}

// grant sets the allowance to n at t: that many of the pending requests, first in line, come due
// at once, and what is left of n lets later ones go as they come; the others move up behind them.
func (p *pacer) grant(t, n int64) {
	p.settle(t)
	p.burst = max(n, 0)
	if p.head == nil || p.burst == 0 {
		return
	}
	for r := p.head; r != nil && p.burst > 0; r = p.head {
		p.burst--
		r.slot = t
		r.notify()
		p.markSent(t)
		p.unlink(r)
	}
	p.reschedule(t)
}

// setHold makes the requests wait until hold at the earliest (0: no hold) and schedules the
// pending ones again.
func (p *pacer) setHold(t, hold int64) {
	if hold == p.hold {
		return
	}
	p.hold = hold
	if p.head != nil {
		p.reschedule(t)
	}
}

// cancel takes r out of the schedule at t and moves the requests behind it up.
func (p *pacer) cancel(r *adaptiveReservation, t int64) {
	p.settle(t)
	if !r.inList {
		return
	}
	p.unlink(r)
	p.reschedule(t)
}

func (p *pacer) unlink(r *adaptiveReservation) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		p.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		p.tail = r.prev
	}
	r.prev, r.next, r.inList = nil, nil, false
	p.pending--
}

// notify closes r's Changed channel, if a waiter took one.
func (r *adaptiveReservation) notify() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Delay reports how long after now the reservation is due.
func (r *adaptiveReservation) Delay(now time.Time) time.Duration {
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.clock(now)
	if !r.inList {
		return 0
	}
	return time.Duration(max(0, r.slot-t))
}

// Changed returns a channel closed when the reservation's time moves; nil once it is due or
// cancelled.
func (r *adaptiveReservation) Changed() <-chan struct{} {
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if !r.inList {
		return nil
	}
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Cancel gives a pending reservation back; the requests behind it move up.
func (r *adaptiveReservation) Cancel(now time.Time) {
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pacer.cancel(r, a.clock(now))
}
