package throttle

import (
	"fmt"
	"sync"
	"time"
)

// maxQuotaWindow is the longest window NewWindowQuota accepts: 366 days, a leap year. A longer
// window is taken for a mistake (a unit error) rather than a quota.
const maxQuotaWindow = 366 * 24 * time.Hour

// NewWindowQuota returns a Limiter that uses a quota of limit requests per window exactly and never
// exceeds it: a client-side sliding log. At most limit requests are due in any interval of length
// window. Requests are served in the order of Reserve (and Wait) calls: request j, counting every
// request due or waiting in that order, is due at max(now, slot(j-limit) + window), where slot(i) is
// when request i was due. So the first limit requests go at once, and each later one exactly one
// window after the one limit places before it; after a burst, every position of the quota repeats
// one window later. Reserve never refuses: the number waiting is bounded by the callers (a queue or
// a pool of workers).
//
// Use it for an API that documents its limit as a quota per window ("6,000 requests per minute")
// and lets the quota be used at any moment within the window: a server that counts in fixed windows
// or keeps a sliding log. Pacing such an API evenly at limit/window (NewLeakyBucket, or
// NewTokenBucket with a small burst) wastes what a fresh window offers at once: 2,000 requests
// against 200 per second take 10 s evenly paced and 9 s in window bursts, and with 1,000 per hour
// an even pace makes every call wait 3.6 s while the whole quota is there. Do not use it against a
// token bucket or a sliding window counter on the server: those refuse a burst of the whole quota
// at a window boundary; use NewTokenBucket with the server's rate and burst there.
//
// It counts sends, not arrivals at the server: a request that travels longer than the one limit
// places behind it can reach the server less than a window after it. Callers that want slack
// against such network jitter stretch the window slightly, for example window/(1-margin) for a
// margin of 0.01.
//
// When a waiting reservation is cancelled, the ones behind it are scheduled again from the
// cancellation time, each as early as the rule above allows, and those that moved (always earlier)
// are told so through Reservation.Changed.
//
// Time is kept as integer nanoseconds since the first now the limiter sees. The limiter remembers
// the slots of the last limit requests sent within the last window, and of the waiting ones, as runs
// of equal slots: a burst at one instant costs one entry however large, and nothing is allocated
// in proportion to limit up front. The Limiter is safe for concurrent use and starts no goroutines.
//
// It returns ErrInvalidBurst for a limit below 1, and ErrInvalidRate for a window that is not
// positive or longer than 366 days.
func NewWindowQuota(limit int, window time.Duration) (Limiter, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: got a window quota limit of %d", ErrInvalidBurst, limit)
	}
	if window <= 0 || window > maxQuotaWindow {
		return nil, fmt.Errorf("%w: got a window quota window of %v (a window must be positive and at most 366 days)",
			ErrInvalidRate, window)
	}
	return &windowQuota{limit: int64(limit), window: int64(window)}, nil
}

// windowQuota numbers requests in the order of Reserve calls (sequence numbers from 0) and keeps
// the slots of a contiguous range of them, ending with the latest, in runs: those that came due
// within the last window (at most limit) and every pending one. Request j needs the slot of
// request j-limit, and a cancellation reschedules only pending requests, so an older slot is never
// needed: it is a window old and bounds nothing. The pending requests are also in a doubly linked
// list of reservations, in order, so that Delay, Changed and Cancel can reach them.
type windowQuota struct {
	limit  int64
	window int64

	mu      sync.Mutex
	started bool      // base is set
	base    time.Time // origin of the integer clock: the first now seen
	runs    runRing
	next    int64 // sequence number of the next request
	head    *windowReservation
	tail    *windowReservation
	pending int64 // length of the list
}

// windowReservation is a pending request of a window quota. Its fields are guarded by q.mu.
type windowReservation struct {
	q          *windowQuota
	slot       int64
	seq        int64 // sequence number
	prev, next *windowReservation
	inList     bool
	cancelled  bool // given back (not sent)
	changed    chan struct{}
}

// clock converts now to the integer clock; q.mu is held.
func (q *windowQuota) clock(now time.Time) int64 {
	if !q.started {
		q.started, q.base = true, now
	}
	return int64(now.Sub(q.base)) // Sub saturates, uses the monotonic clock when both have it
}

// settle takes the pending requests that have come due at t out of the list and forgets the slots
// that no longer bound any request; q.mu is held.
func (q *windowQuota) settle(t int64) {
	for r := q.head; r != nil && r.slot <= t; r = q.head {
		q.unlink(r)
	}
	// A slot a whole window old bounds nothing after t: forget it. What is left is at most limit
	// due slots (no more than limit are due in any window) and the pending ones, which are after t.
	for q.runs.size > 0 {
		if f := q.runs.front(); addSat(f.slot, q.window) <= t {
			q.runs.popFront()
			continue
		}
		break
	}
}

// slotFor returns the earliest slot of the next request arriving at t, given the slot of the
// request limit places before it (ok false when the ring no longer holds it: it bounds nothing).
func (q *windowQuota) slotFor(t, before int64, ok bool) int64 {
	s := t
	if q.runs.size > 0 {
		s = max(s, q.runs.back().slot) // FIFO, even if a caller's clock steps back a little
	}
	if ok {
		s = max(s, addSat(before, q.window))
	}
	return s
}

// push appends the slot of the next request.
func (q *windowQuota) push(slot int64) {
	q.runs.pushBack(slot, q.next)
	q.next++
}

// Reserve books one request at now.
func (q *windowQuota) Reserve(now time.Time) (Reservation, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.clock(now)
	q.settle(t)
	before, ok := q.runs.slotOf(q.next - q.limit)
	slot := q.slotFor(t, before, ok)
	q.push(slot)
	if slot <= t {
		return dueReservation{}, nil
	}
	r := &windowReservation{q: q, slot: slot, seq: q.next - 1, prev: q.tail, inList: true}
	if q.tail != nil {
		q.tail.next = r
	} else {
		q.head = r
	}
	q.tail = r
	q.pending++
	return r, nil
}

func (q *windowQuota) unlink(r *windowReservation) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		q.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		q.tail = r.prev
	}
	r.prev, r.next, r.inList = nil, nil, false
	q.pending--
}

// cancel takes the pending r out of the sequence at t and schedules the requests behind it again:
// O(1) per request behind, as a cursor follows request next-limit through the runs.
func (q *windowQuota) cancel(r *windowReservation, t int64) {
	q.settle(t)
	if !r.inList {
		return
	}
	behind := r.next
	q.runs.truncate(r.seq)
	q.next = r.seq
	r.cancelled = true
	q.unlink(r)
	c := q.runs.cursor(q.next - q.limit)
	for x := behind; x != nil; x = x.next {
		before, ok := c.slotOf(q.next - q.limit)
		s := q.slotFor(t, before, ok)
		x.seq = q.next
		q.push(s)
		if s != x.slot {
			x.slot = s
			x.notify()
		}
	}
	q.runs.shrink() // only now: truncate did not, so that the ring was not regrown above
	q.settle(t)     // keep "pending" meaning "after t", should a rescheduled head be due at t
}

// notify closes r's Changed channel, if a waiter took one.
func (r *windowReservation) notify() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Delay reports how long after now the reservation is due.
func (r *windowReservation) Delay(now time.Time) time.Duration {
	q := r.q
	q.mu.Lock()
	defer q.mu.Unlock()
	return time.Duration(max(0, r.slot-q.clock(now)))
}

// Changed returns a channel closed when the reservation's time moves; nil once it is due or
// cancelled.
func (r *windowReservation) Changed() <-chan struct{} {
	q := r.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if !r.inList {
		return nil
	}
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Cancel gives a pending reservation back; the requests behind it move up where the quota allows.
func (r *windowReservation) Cancel(now time.Time) {
	q := r.q
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancel(r, q.clock(now))
}

// size reports how many runs and how many slots the limiter keeps; for tests.
func (q *windowQuota) size() (runs int, slots int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range q.runs.size {
		slots += q.runs.at(i).count
	}
	return q.runs.size, slots
}

// slotRun is a run of count consecutive requests, from sequence number start, due at one slot.
type slotRun struct {
	slot, start, count int64
}

// runRing is a double-ended queue of runs in sequence order, covering consecutive sequence
// numbers, in a ring buffer whose capacity is a power of two: it grows by doubling and shrinks by
// half when a quarter full, so a past burst does not hold memory. The zero value is empty and has
// allocated nothing.
type runRing struct {
	buf  []slotRun
	head int
	size int
}

const minRunRing = 8

func (q *runRing) at(i int) *slotRun { return &q.buf[(q.head+i)&(len(q.buf)-1)] }
func (q *runRing) front() *slotRun   { return q.at(0) }
func (q *runRing) back() *slotRun    { return q.at(q.size - 1) }

// pushBack appends request seq at slot, to the last run when its slot is the same.
func (q *runRing) pushBack(slot, seq int64) {
	if q.size > 0 {
		if b := q.back(); b.slot == slot {
			b.count++
			return
		}
	}
	if q.size == len(q.buf) {
		q.resize(max(minRunRing, 2*len(q.buf)))
	}
	*q.at(q.size) = slotRun{slot: slot, start: seq, count: 1}
	q.size++
}

func (q *runRing) popFront() {
	*q.front() = slotRun{}
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.size--
	q.shrink()
}

// find returns the index of the run holding request seq, or -1.
func (q *runRing) find(seq int64) int {
	if q.size == 0 || seq < q.front().start {
		return -1
	}
	lo, hi := 0, q.size-1 // the answer is in [lo, hi] if anywhere
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if q.at(mid).start <= seq {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if r := q.at(lo); seq < r.start+r.count {
		return lo
	}
	return -1
}

// slotOf returns the slot of request seq, if the ring still holds it.
func (q *runRing) slotOf(seq int64) (int64, bool) {
	if i := q.find(seq); i >= 0 {
		return q.at(i).slot, true
	}
	return 0, false
}

// truncate forgets request seq and every request after it. It does not shrink the ring, as the
// caller refills it at once; the caller calls shrink after.
func (q *runRing) truncate(seq int64) {
	i := q.find(seq)
	if i < 0 {
		return
	}
	r := q.at(i)
	keep := i
	if r.start < seq {
		r.count = seq - r.start
		keep++
	}
	for j := keep; j < q.size; j++ {
		*q.at(j) = slotRun{}
	}
	q.size = keep
}

// runCursor finds the slots of increasing sequence numbers in a runRing that only grows at the
// back meanwhile, in O(1) amortized per step: it keeps the index of the run it last found. An
// index stays valid across pushBack (a resize keeps the order from the front); popFront,
// truncate and shrink invalidate it.
type runCursor struct {
	ring *runRing
	i    int // index of the run holding the last sequence number found; -1 before the front
}

// cursor returns a cursor positioned at request seq, which the next slotOf call must not precede.
func (q *runRing) cursor(seq int64) runCursor {
	return runCursor{ring: q, i: q.find(seq)}
}

// slotOf returns the slot of request seq, if the ring holds it. seq never decreases from one
// call to the next.
func (c *runCursor) slotOf(seq int64) (int64, bool) {
	q := c.ring
	if c.i < 0 {
		if q.size == 0 || seq < q.front().start {
			return 0, false
		}
		c.i = 0
	}
	// The runs at c.i and after cover consecutive sequence numbers from at most seq.
	for ; c.i < q.size; c.i++ {
		if r := q.at(c.i); seq < r.start+r.count {
			return r.slot, true
		}
	}
	return 0, false // after the latest request: never asked, as seq is next-limit
}

func (q *runRing) shrink() {
	if len(q.buf) > minRunRing && q.size <= len(q.buf)/4 {
		q.resize(len(q.buf) / 2)
	}
}

func (q *runRing) resize(n int) {
	buf := make([]slotRun, n)
	for i := range q.size {
		buf[i] = *q.at(i)
	}
	q.buf, q.head = buf, 0
}
