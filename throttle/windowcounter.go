package throttle

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"
)

// NewWindowCounter returns a Limiter that mirrors a server's sliding window counter of limit
// requests per window exactly: the counter keeps two fixed windows aligned to the Unix epoch (a
// window starts where the wall clock's UnixNano is a multiple of window) and admits a request at
// elapsed time e into the current window iff prev×(window−e) + (cur+1)×window <= limit×window,
// with cur the requests counted in the current window and prev those in the window before it.
// Requests are served in the order of Reserve (and Wait) calls: request j, counting every request
// due or waiting before it, is due at the earliest instant, no earlier than its Reserve call and
// than the request before it, at which the rule admits it with the requests due before it counted.
// So a fresh limiter lets limit requests go at once; then the previous window's weight decays and
// admits the next ones one by one, limit−1 per window in the long run (at a window's start the
// previous window's weight leaves no room for the last one; a limit of 1 is one request every
// other window). The arithmetic is exact (128-bit
// products, instants rounded up to the nanosecond), so the rule holds exactly at every due time.
// Reserve never refuses: the number waiting is bounded by the callers (a queue or a pool of
// workers).
//
// Use it for an API documented as a sliding window counter ("Cloudflare-style" rate limiting,
// limit per window with the previous window's count weighted by its overlap), whose windows are
// aligned to the Unix epoch, as Cloudflare's and testserver's are: a client that knows where the
// server's windows start can spend the fresh start's burst and follow the decaying weight, which
// an even pace of (limit−1)/window cannot. Do not use it when the server's windows are not aligned
// to the epoch (they start at a key's first request, say), or when the client's clock may be
// skewed against the server's by a noticeable part of a window: the windows are on the client's
// clock. The limiter counts sends, not arrivals at the server; callers keep a margin against
// network jitter and clock skew by telling it fewer than the server's limit, for example
// ⌊limit×(1−margin)⌋. For a quota that may be spent at any moment of a window (a fixed window or
// sliding log on the server) use NewWindowQuota; for a token bucket, NewTokenBucket.
//
// When a waiting reservation is cancelled, the ones behind it are scheduled again from the
// cancellation time, each as early as the rule allows, and those that moved (always earlier) are
// told so through Reservation.Changed.
//
// The window phase is taken from the first now the limiter sees (now.UnixNano()); later instants
// are measured from it with now.Sub (the monotonic clock, when now has one), so a step of the wall
// clock does not move the windows. The limiter keeps the counts of the windows that still weigh on
// a request (at most the previous and current window, and those holding waiting requests) and the
// waiting reservations: memory in proportion to the requests waiting, nothing in proportion to
// limit. The Limiter is safe for concurrent use and starts no goroutines.
//
// It returns ErrInvalidBurst for a limit below 1, and ErrInvalidRate for a window that is not
// positive or longer than 366 days.
func NewWindowCounter(limit int, window time.Duration) (Limiter, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: got a window counter limit of %d", ErrInvalidBurst, limit)
	}
	if window <= 0 || window > maxQuotaWindow {
		return nil, fmt.Errorf("%w: got a window counter window of %v (a window must be positive and at most 366 days)",
			ErrInvalidRate, window)
	}
	return &windowCounter{limit: int64(limit), window: int64(window)}, nil
}

// windowCounter schedules requests on an integer clock: nanoseconds since base, the first now
// seen. Window k of the server covers the clock's [k×window−phase, (k+1)×window−phase), phase
// being base's offset into its epoch-aligned window. counts holds, for the windows from the one
// before the present one on, how many requests are due in each (due or waiting), and the waiting
// requests are in a doubly linked list of reservations, in order, so that Delay, Changed and Cancel
// can reach them.
type windowCounter struct {
	limit  int64
	window int64

	mu      sync.Mutex
	started bool      // base and phase are set
	base    time.Time // origin of the integer clock: the first now seen
	phase   int64     // base.UnixNano() modulo window, in [0, window)
	latest  int64     // the latest time seen; no request is scheduled before it
	last    int64     // slot of the newest request
	counts  countRing
	head    *counterReservation
	tail    *counterReservation
	pending int64 // length of the list
}

// counterReservation is a waiting request of a window counter. Its fields are guarded by c.mu.
type counterReservation struct {
	c          *windowCounter
	slot       int64
	prev, next *counterReservation
	inList     bool
	cancelled  bool // given back (not sent)
	changed    chan struct{}
}

// clock converts now to the integer clock; c.mu is held.
func (c *windowCounter) clock(now time.Time) int64 {
	if !c.started {
		c.started, c.base = true, now
		c.phase = now.UnixNano() % c.window
		if c.phase < 0 { // before 1970
			c.phase += c.window
		}
	}
	return int64(now.Sub(c.base)) // Sub saturates, uses the monotonic clock when both have it
}

// windowOf returns the index of the window holding instant t (t >= 0) and that window's start.
func (c *windowCounter) windowOf(t int64) (k, start int64) {
	k = addSat(t, c.phase) / c.window
	return k, k*c.window - c.phase
}

// settle takes the waiting requests that have come due at t out of the list and forgets the counts
// of windows that no longer weigh on any request (those before the one preceding t's); c.mu is
// held.
func (c *windowCounter) settle(t int64) {
	for r := c.head; r != nil && r.slot <= t; r = c.head {
		c.unlink(r)
	}
	k, _ := c.windowOf(t)
	for c.counts.size > 0 && c.counts.front().k < k-1 {
		c.counts.popFront()
	}
}

// slotFrom returns the earliest instant at or after s at which one more request is admitted, with
// the requests already counted; s is at or after the newest request's slot, so no count lies in a
// window after s's.
func (c *windowCounter) slotFrom(s int64) int64 {
	for {
		k, start := c.windowOf(s)
		cur, prev := c.counts.get(k), c.counts.get(k-1)
		if cur < c.limit {
			// The earliest elapsed time e with prev×(W−e) <= (limit−cur−1)×W, rounded up.
			if e := c.minElapsed(cur, prev); e < c.window {
				return max(s, start+e)
			}
		}
		next := addSat(start, c.window)
		if next <= s { // the clock saturated: no later instant exists
			return math.MaxInt64
		}
		s = next
		// The next window counts nothing yet and has this one as its previous: the loop ends
		// there, or in the one after it, which nothing weighs on.
	}
}

// minElapsed returns the least elapsed time e (in [0, window], window meaning never in this
// window) into a window counting cur requests, with prev in the window before, at which one more
// is admitted: prev×(W−e) + (cur+1)×W <= limit×W, cur < limit.
func (c *windowCounter) minElapsed(cur, prev int64) int64 {
	if prev == 0 {
		return 0
	}
	// W−e <= ⌊(limit−cur−1)×W / prev⌋, computed in 128 bits (limit×W can exceed int64).
	hi, lo := bits.Mul64(uint64(c.limit-cur-1), uint64(c.window))
	if hi >= uint64(prev) {
		return 0 // the quotient does not fit in 64 bits: far above W
	}
	q, _ := bits.Div64(hi, lo, uint64(prev))
	if q >= uint64(c.window) {
		return 0
	}
	return c.window - int64(q)
}

// push counts the next request at slot.
func (c *windowCounter) push(slot int64) {
	k, _ := c.windowOf(slot)
	c.counts.add(k)
	c.last = slot
}

// Reserve books one request at now.
func (c *windowCounter) Reserve(now time.Time) (Reservation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.clock(now)
	c.latest = max(c.latest, t) // FIFO and counts kept, even if a caller's clock steps back
	c.settle(c.latest)
	slot := c.slotFrom(max(c.latest, c.last))
	c.push(slot)
	if slot <= t {
		return dueReservation{}, nil
	}
	r := &counterReservation{c: c, slot: slot, prev: c.tail, inList: true}
	if c.tail != nil {
		c.tail.next = r
	} else {
		c.head = r
	}
	c.tail = r
	c.pending++
	return r, nil
}

func (c *windowCounter) unlink(r *counterReservation) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		c.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		c.tail = r.prev
	}
	r.prev, r.next, r.inList = nil, nil, false
	c.pending--
}

// cancel takes the waiting r out at t and schedules the requests behind it again, from t: O(1)
// per request behind.
func (c *windowCounter) cancel(r *counterReservation, t int64) {
	c.latest = max(c.latest, t)
	t = c.latest
	c.settle(t)
	if !r.inList {
		return
	}
	// Uncount every request from the newest back to r: theirs are the newest slots, at the back
	// of counts.
	for x := c.tail; x != r.prev; x = x.prev {
		k, _ := c.windowOf(x.slot)
		c.counts.remove(k)
	}
	// The request before r is waiting, or due at or before t.
	c.last = t
	if r.prev != nil {
		c.last = r.prev.slot
	}
	behind := r.next
	r.cancelled = true
	c.unlink(r)
	for x := behind; x != nil; x = x.next {
		s := c.slotFrom(max(t, c.last))
		c.push(s)
		if s != x.slot {
			x.slot = s
			x.notify()
		}
	}
	c.counts.shrink() // only now: remove did not, so that the ring was not regrown above
	c.settle(t)       // keep "waiting" meaning "after t", should a rescheduled head be due at t
}

// notify closes r's Changed channel, if a waiter took one.
func (r *counterReservation) notify() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Delay reports how long after now the reservation is due.
func (r *counterReservation) Delay(now time.Time) time.Duration {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Duration(max(0, r.slot-c.clock(now)))
}

// Changed returns a channel closed when the reservation's time moves; nil once it is due or
// cancelled.
func (r *counterReservation) Changed() <-chan struct{} {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !r.inList {
		return nil
	}
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Cancel gives a waiting reservation back; the requests behind it move up where the rule allows.
func (r *counterReservation) Cancel(now time.Time) {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancel(r, c.clock(now))
}

// windowCount is the number of requests due in window k.
type windowCount struct {
	k, n int64
}

// countRing is a double-ended queue of the windows that count requests, in increasing window
// order (windows that count none are left out), in a ring buffer whose capacity is a power of two:
// it grows by doubling and shrinks by half when a quarter full, so a past backlog does not hold
// memory. The zero value is empty and has allocated nothing.
type countRing struct {
	buf  []windowCount
	head int
	size int
}

const minCountRing = 4

func (q *countRing) at(i int) *windowCount { return &q.buf[(q.head+i)&(len(q.buf)-1)] }
func (q *countRing) front() *windowCount   { return q.at(0) }
func (q *countRing) back() *windowCount    { return q.at(q.size - 1) }

// get returns the count of window k, which is at or after the second-to-last window held.
func (q *countRing) get(k int64) int64 {
	for i := q.size - 1; i >= 0 && i >= q.size-2; i-- {
		if w := q.at(i); w.k == k {
			return w.n
		}
	}
	return 0
}

// add counts one request in window k, which is at or after the last window held.
func (q *countRing) add(k int64) {
	if q.size > 0 {
		if b := q.back(); b.k == k {
			b.n++
			return
		}
	}
	if q.size == len(q.buf) {
		q.resize(max(minCountRing, 2*len(q.buf)))
	}
	*q.at(q.size) = windowCount{k: k, n: 1}
	q.size++
}

// remove uncounts one request of window k, the last window held; a window left empty is dropped.
// It does not shrink the ring, as the caller refills it at once; the caller calls shrink after.
func (q *countRing) remove(k int64) {
	if q.size == 0 {
		return
	}
	b := q.back()
	if b.k != k {
		return
	}
	if b.n--; b.n == 0 {
		*b = windowCount{}
		q.size--
	}
}

func (q *countRing) popFront() {
	*q.front() = windowCount{}
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.size--
	q.shrink()
}

func (q *countRing) shrink() {
	if len(q.buf) > minCountRing && q.size <= len(q.buf)/4 {
		q.resize(len(q.buf) / 2)
	}
}

func (q *countRing) resize(n int) {
	buf := make([]windowCount, n)
	for i := range q.size {
		buf[i] = *q.at(i)
	}
	q.buf, q.head = buf, 0
}
