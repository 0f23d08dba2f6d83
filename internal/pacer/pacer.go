// Package pacer is the one FIFO reservation schedule under steady's pacing limiters: requests are
// given slots in the order they reserve, on an integer clock (nanoseconds from an origin the owner
// chooses), and a reservation whose slot moves is told through a channel.
//
// A Pacer spaces requests on one or more lanes. Each lane is a meter with a spacing per unit (the
// requests lane counts 1 per request; a units lane counts a request's cost, such as tokens), a
// GCRA schedule with no tolerance: an even pace. A request may go when every lane has room for it.
// The requests lane is free one spacing after the request before; the units lane is free for a
// request once its own cost has come back since the one before (its cost times the spacing after
// it), as a server's bucket of units admits a request of cost n only with n units in it: a costly
// request waits for its cost, a cheap one behind it does not wait for the costly one's. A fresh
// units lane, with nothing sent yet, lets the first request go at once. On top of the lanes:
//   - a hold: nothing goes before it (the end of a pause, a window's reset);
//   - a credit: up to that many requests go at once, ahead of the spacing, while nothing is
//     waiting (what the server said remains of its quota); the spacing resumes after the last one;
//     a units credit, when set, bounds the same burst by the sum of its costs (what remains of a
//     quota of tokens or points);
//   - a cap on requests in flight (sent and not yet answered), for probing a server's burst;
//   - a window: at most a limit of requests in any window of time (a sliding log), each one
//     going at the earliest one window, and a slack, after the request limit places before it;
//   - a bound on catching up: a request that went late (its waiter woke after its slot, see Went)
//     moves the requests lane so that the ones behind it follow it by at least the spacing less
//     that many spacings. Unbounded by default: slots keep to the schedule, and the requests
//     behind a late one go on time, closer to it than the pace.
//
// The Pacer is not safe for concurrent use by itself: its owner guards it with the lock it passes to
// New, and holds that lock around every Pacer method. Reservations take the same lock in their own
// methods, so they are safe for concurrent use.
package pacer

import (
	"math"
	"sync"
	"time"
)

// Lanes a Pacer meters: requests (1 per request) and units (a request's cost).
const (
	LaneRequests = iota
	LaneUnits
	numLanes
)

// Pacer is a FIFO schedule; see the package doc. Create it with New.
type Pacer struct {
	mu    sync.Locker
	clock func(time.Time) int64

	interval [numLanes]int64 // spacing per unit in nanoseconds; 0 = unpaced lane
	free     [numLanes]int64 // when each lane is free again, after the requests already due
	// lastSlot and lastCost are the latest due request's, so that a new spacing counts from it.
	lastSlot, lastCost int64
	sentAny            bool
	hold               int64
	credit             int64
	// unitCredit bounds the costs of the requests sent from the credit; negative: not metered.
	unitCredit int64
	// maxInFlight caps the requests sent and not yet answered; 0 = no cap.
	maxInFlight int
	inFlight    int
	// capWait is how long a request held back by the cap waits at most (the owner's estimate of a
	// round trip): answers that are late do not hold it forever.
	capWait int64
	// catchUp is how many spacings the requests behind a late one may close on it (negative:
	// unbounded); see SetCatchUp. wentAt is when the latest late request went (see Went).
	catchUp, wentAt int64

	head, tail *Reservation
	pending    int

	// batching is set between Begin and Commit: the settings change without placing the waiting
	// requests, and dirty records that one did.
	batching, dirty bool

	// The window: at most winLimit sends in any winSpan (plus winSlack); ring holds the slots of
	// the latest winLimit sends, ringN counting every send. winLimit 0: no window.
	winLimit          int
	winSpan, winSlack int64
	ring              []int64
	ringN             int64

	onSent func(slot, cost int64)
}

// New returns a Pacer guarded by mu (which its owner holds around every call) on the clock that
// converts a time into the owner's integer nanoseconds (called with mu held; it must never go
// back). onSent, when not nil, is told of every request as it comes due, in order, with its slot
// and cost.
func New(mu sync.Locker, clock func(time.Time) int64, onSent func(slot, cost int64)) *Pacer {
	p := &Pacer{mu: mu, clock: clock, onSent: onSent, unitCredit: -1, catchUp: -1}
	p.free[LaneUnits] = math.MinInt64 / 4 // nothing sent: the first request's cost is there
	return p
}

// Reservation is one request booked with a Pacer. Its methods are safe for concurrent use; they
// implement throttle.Reservation.
type Reservation struct {
	p          *Pacer
	slot       int64
	cost       int64
	after      [numLanes]int64 // the lanes' free times once this request has gone
	prev, next *Reservation
	inList     bool
	changed    chan struct{}
	// held is set when the slot lies where a hold or the window put it, beyond where the pace
	// and the requests ahead would (see Held).
	held bool
	// fromCredit is set when the slot is the hold's end because the credit covers the request
	// (see place): it spends the credit when it goes.
	fromCredit bool
}

// Interval returns the spacing per unit of lane, in nanoseconds (0: unpaced).
func (p *Pacer) Interval(lane int) int64 { return p.interval[lane] }

// Pending returns how many reservations are waiting for their slot.
func (p *Pacer) Pending() int { return p.pending }

// Credit returns how many requests may still go at once.
func (p *Pacer) Credit() int64 { return p.credit }

// UnitCredit returns how many units the requests going at once may still cost; negative when the
// credit is not metered in units.
func (p *Pacer) UnitCredit() int64 { return p.unitCredit }

// fromCredit reports whether a request of cost may go from the credit, and spends it if so.
func (p *Pacer) fromCredit(cost int64) bool {
	if p.credit <= 0 || (p.unitCredit >= 0 && p.unitCredit < cost) {
		return false
	}
	p.credit--
	if p.unitCredit >= 0 {
		p.unitCredit -= cost
	}
	return true
}

// Hold returns the hold (0: none).
func (p *Pacer) Hold() int64 { return p.hold }

// InFlight returns how many requests are sent and not yet answered (see Answered).
func (p *Pacer) InFlight() int { return p.inFlight }

// Reserve books a request of cost (at least 1) at t. It returns nil when the request may go at
// once (it is then counted as sent), else its pending Reservation, linked at the tail.
func (p *Pacer) Reserve(t, cost int64) *Reservation {
	cost = max(cost, 1)
	p.Settle(t)
	if p.head == nil && p.fitsInFlight() {
		if t >= p.hold && p.fromCredit(cost) {
			p.send(t, cost, p.creditAfter(t, cost))
			return nil
		}
		if slot, after := p.slotFor(t, cost, p.free); slot <= t && p.windowAllows(t) {
			p.send(slot, cost, after)
			return nil
		}
	}
	r := &Reservation{p: p, cost: cost, prev: p.tail, inList: true}
	if p.tail != nil {
		p.tail.next = r
	} else {
		p.head = r
	}
	p.tail = r
	p.pending++
	p.place(r, t)
	return r
}

// fitsInFlight reports whether one more request may be in flight.
func (p *Pacer) fitsInFlight() bool { return p.maxInFlight <= 0 || p.inFlight < p.maxInFlight }

// windowAllows reports whether a request with nothing waiting may go at t under the window.
func (p *Pacer) windowAllows(t int64) bool {
	k := int64(p.winLimit)
	if k == 0 || p.ringN < k {
		return true
	}
	return addSat(p.ring[p.ringN%k], p.winSpan+p.winSlack) <= t
}

// WindowLimit returns the window's limit of requests (0: no window).
func (p *Pacer) WindowLimit() int { return p.winLimit }

// SetWindow allows at most limit requests in any span of time (a client-side sliding log), each
// going at the earliest span plus slack after the one limit places before it; sends from the credit
// count but are not held. A limit of 0 removes the window. When the limit changes, recent (the
// slots of the latest sends, oldest first, as the owner remembers them) seeds the window.
func (p *Pacer) SetWindow(t int64, limit int, span, slack int64, recent []int64) {
	if limit == p.winLimit && span == p.winSpan && slack == p.winSlack {
		return
	}
	if limit != p.winLimit {
		p.ring, p.ringN = nil, 0
		if limit > 0 {
			p.ring = make([]int64, limit)
			for _, s := range recent[max(len(recent)-limit, 0):] {
				p.ring[p.ringN%int64(limit)] = s
				p.ringN++
			}
		}
	}
	p.winLimit, p.winSpan, p.winSlack = max(limit, 0), span, slack
	p.changed(t)
}

// Refused takes back from the window the send that the server refused: the latest one in the
// window whose slot is within near of sent (a request leaves at its slot or late; and its owner's
// clock, read before another caller's, may name a time a little before the slot the pacer gave
// it). A refused request took no place in the server's window (a fixed window or a sliding log
// counts what it admits), so the window holds one send less, and the place it held frees now, not
// a window after the refused send: counted, it kept the quota's last place of every window after
// it for the window after that. A window that had wrapped forgets the send before its oldest: it
// counts as long gone (sends from the credit, which the window counts but does not hold, can make
// that one request early). Without a window, or with no such send in it, Refused does nothing.
func (p *Pacer) Refused(t, sent, near int64) {
	k := int64(p.winLimit)
	if k == 0 {
		return
	}
	n := min(p.ringN, k)
	for j := p.ringN - 1; j >= p.ringN-n; j-- { // newest first
		if s := p.ring[j%k]; s > sent+near || sent-s > near {
			continue
		}
		for x := j; x < p.ringN-1; x++ {
			p.ring[x%k] = p.ring[(x+1)%k]
		}
		p.ringN--
		if p.ringN >= k {
			// The send before the oldest held fell out of the ring long ago: it is older than
			// any the window holds, and counts as gone.
			p.ring[p.ringN%k] = math.MinInt64 / 4
		}
		p.changed(t)
		return
	}
}

// slotFor is the earliest slot at or after t at which a request of cost fits every lane whose free
// times are from, and the lanes' free times after it.
func (p *Pacer) slotFor(t, cost int64, from [numLanes]int64) (int64, [numLanes]int64) {
	s := max(t, p.hold, p.laneReady(from, cost))
	var after [numLanes]int64
	after[LaneRequests] = addSat(s, p.interval[LaneRequests])
	after[LaneUnits] = s // the cost is paid before: the next request waits for its own
	return s, after
}

// laneReady is the earliest instant every lane has room for a request of cost, from their free
// times.
func (p *Pacer) laneReady(from [numLanes]int64, cost int64) int64 {
	ready := int64(math.MinInt64)
	if iv := p.interval[LaneRequests]; iv > 0 {
		ready = from[LaneRequests]
	}
	if iv := p.interval[LaneUnits]; iv > 0 {
		ready = max(ready, addSat(from[LaneUnits], mulSat(cost, iv)))
	}
	return ready
}

// creditAfter is the lanes' free times after a request of cost sent from the credit at t: the
// spacing resumes one spacing after it, whatever was booked before.
func (p *Pacer) creditAfter(t, cost int64) [numLanes]int64 {
	var after [numLanes]int64
	after[LaneRequests] = addSat(t, p.interval[LaneRequests])
	after[LaneUnits] = t // the burst drained the units: the next request waits for its own cost
	return after
}

// place gives r its slot behind its predecessor (or the requests already due). A request that
// waits for a place in flight is given the slot capWait from t; Answered places it again when a
// place frees up.
func (p *Pacer) place(r *Reservation, t int64) {
	from := p.free
	if r.prev != nil {
		from = r.prev.after
	}
	s, after := p.slotFor(t, r.cost, from)
	held := p.hold > max(t, p.laneReady(from, r.cost))
	r.fromCredit = false
	if p.hold > t && p.creditCovers(r) {
		// The credit goes when the hold ends, ahead of the spacing, as it would go at once with no
		// hold (a quota said to be back at its reset: the first request goes then, not a spacing
		// after the last). Sends from the credit count in the window but are not held by it.
		r.slot, r.after, r.held, r.fromCredit = p.hold, p.creditAfter(p.hold, r.cost), true, true
		if p.maxInFlight > 0 && p.inFlight+p.indexOf(r) >= p.maxInFlight {
			r.slot = max(r.slot, addSat(t, p.capWait))
		}
		r.notify()
		return
	}
	if p.winLimit > 0 {
		if back, ok := p.windowBack(r); ok && back > s {
			s, after = p.slotFor(back, r.cost, from)
			held = true
		}
	}
	r.held = held
	if p.maxInFlight > 0 && p.inFlight+p.indexOf(r) >= p.maxInFlight {
		s = max(s, addSat(t, p.capWait))
	}
	r.after = after
	if s != r.slot {
		r.slot = s
		r.notify()
	}
}

// creditCovers reports whether the credit covers r where it waits in line: the requests ahead of it
// and r itself fit in the credit, and in the units credit when it is set (FIFO, as release spends
// it). It walks at most the credit's length of the line.
func (p *Pacer) creditCovers(r *Reservation) bool {
	n, units := int64(0), int64(0)
	for x := p.head; x != nil; x = x.next {
		n++
		units += x.cost
		if n > p.credit || (p.unitCredit >= 0 && units > p.unitCredit) {
			return false
		}
		if x == r {
			return true
		}
	}
	return false
}

// windowBack is the earliest slot the window allows r: one window and the slack after the request
// winLimit places before it, which is a pending one ahead of r or one already sent (false when
// fewer than winLimit were ever sent before it).
func (p *Pacer) windowBack(r *Reservation) (int64, bool) {
	i := int64(p.indexOf(r)) // pending ahead of r
	k := int64(p.winLimit)
	if i >= k {
		x := r
		for range k {
			x = x.prev
		}
		return addSat(x.slot, p.winSpan+p.winSlack), true
	}
	back := k - i // how far back among the sends
	if back > p.ringN {
		return 0, false
	}
	return addSat(p.ring[(p.ringN-back)%k], p.winSpan+p.winSlack), true
}

// indexOf counts the reservations ahead of r in the list (0 for the head). Only used with an
// in-flight cap or a window, with as many waiting as there are callers.
func (p *Pacer) indexOf(r *Reservation) int {
	n := 0
	for x := p.head; x != nil && x != r; x = x.next {
		n++
	}
	return n
}

func (p *Pacer) send(slot, cost int64, after [numLanes]int64) {
	p.free = after
	p.lastSlot, p.lastCost, p.sentAny = slot, cost, true
	if p.winLimit > 0 {
		p.ring[p.ringN%int64(p.winLimit)] = slot
		p.ringN++
	}
	p.inFlight++
	if p.onSent != nil {
		p.onSent(slot, cost)
	}
}

// Settle moves the pending requests whose slot has come at t out of the list, in order, counting
// them as sent.
func (p *Pacer) Settle(t int64) {
	for r := p.head; r != nil && r.slot <= t; r = p.head {
		p.unlink(r)
		if r.fromCredit {
			p.fromCredit(r.cost)
		}
		p.send(r.slot, r.cost, r.after)
	}
}

// Answered records that one request sent earlier was answered (or failed), freeing a place in
// flight.
func (p *Pacer) Answered(t int64) {
	if p.inFlight > 0 {
		p.inFlight--
	}
	if p.maxInFlight > 0 && p.head != nil {
		p.Reschedule(t)
	}
}

// Reschedule recomputes every pending slot at t from the lanes, the hold and the cap, keeping the
// order, and wakes the reservations that moved.
func (p *Pacer) Reschedule(t int64) {
	p.Settle(t)
	for r := p.head; r != nil; r = r.next {
		p.place(r, t)
	}
	p.Settle(t)
}

// SetInterval sets the spacing per unit of lane (0: unpaced), counted from the latest request that
// went, and reschedules the waiting requests when it changed by more than 1% (a stream of tiny
// adjustments would wake every waiter on every response for nothing).
func (p *Pacer) SetInterval(t int64, lane int, iv int64) {
	old := p.interval[lane]
	iv = max(iv, 0)
	if iv == old {
		return
	}
	p.interval[lane] = iv
	if p.sentAny {
		p.free[lane] = p.lastSlot // the units lane: the cost of the next request is paid from it
		if lane == LaneRequests {
			p.free[lane] = max(addSat(p.lastSlot, iv), p.afterLate())
		}
	}
	if d := iv - old; d > old/100 || -d > old/100 || (iv == 0) != (old == 0) {
		p.changed(t)
	}
}

// SetCatchUp bounds how many spacings of the requests lane the requests behind a late one may
// close on it (see Went); negative: unbounded (the default). 0 spaces every request from the time
// the one before it went, for a server that tolerates no two requests closer than its pace (a
// burst of one); n from the slot n spacings before that, for one that tolerates a burst of n+1.
func (p *Pacer) SetCatchUp(n int64) { p.catchUp = n }

// Went records that a request whose slot had come went at t, late (its waiter woke after the
// slot): with a bound on catching up (SetCatchUp), the requests lane is not free before t plus the
// spacing less the bound's spacings, and the waiting requests are placed again from there.
func (p *Pacer) Went(t int64) {
	if p.catchUp < 0 || p.interval[LaneRequests] <= 0 {
		return
	}
	p.Settle(t) // the requests due by now have gone (their waiters may be waking too)
	p.wentAt = max(p.wentAt, t)
	if free := p.afterLate(); free > p.free[LaneRequests] {
		p.free[LaneRequests] = free
		p.changed(t)
	}
}

// afterLate is the earliest the requests lane is free after the latest request that went late,
// under the bound on catching up (MinInt64 without one, or before any went late).
func (p *Pacer) afterLate() int64 {
	iv := p.interval[LaneRequests]
	if p.catchUp < 0 || p.wentAt <= 0 || iv <= 0 {
		return math.MinInt64
	}
	// Both terms are within [0, MaxInt64] (the owner's clock starts at 0): no overflow.
	return addSat(p.wentAt, iv) - mulSat(p.catchUp, iv)
}

// SetHold makes every request wait until hold at the earliest (0: no hold).
func (p *Pacer) SetHold(t, hold int64) {
	if hold == p.hold {
		return
	}
	p.hold = hold
	p.changed(t)
}

// SetMaxInFlight caps the requests in flight (0: no cap). A request held back by the cap waits
// for an answer, or wait at most (the owner's estimate of a round trip), then goes.
func (p *Pacer) SetMaxInFlight(t int64, n int, wait time.Duration) {
	p.capWait = max(int64(wait), 0)
	if n == p.maxInFlight {
		return
	}
	p.maxInFlight = max(n, 0)
	p.changed(t)
}

// Grant sets the credit to n at t: that many requests go at once (within the units credit, see
// GrantUnits), the waiting ones first in line, the rest as they come; the spacing resumes after
// the last of them.
func (p *Pacer) Grant(t, n int64) {
	p.Settle(t)
	p.credit = max(n, 0)
	p.released(t)
}

// GrantUnits sets the units credit to n at t: the requests going at once from the credit may cost
// n units in all, the first in line that does not fit stopping the burst (FIFO). A negative n
// removes the bound.
func (p *Pacer) GrantUnits(t, n int64) {
	p.Settle(t)
	p.unitCredit = max(n, -1)
	p.released(t)
}

// Begin starts a batch of settings applied at once: until Commit, the Set and Grant methods
// change the settings without placing or releasing the waiting requests, so that none goes under
// a mix of the old settings and the new (a spacing lifted before the hold that replaces it is set
// would let every waiting request go).
func (p *Pacer) Begin() { p.batching = true }

// Commit ends the batch Begin started: the waiting requests are placed once, at t, under the
// settings as they now are, and the credit releases those it lets go.
func (p *Pacer) Commit(t int64) {
	p.batching = false
	if !p.dirty {
		return
	}
	p.dirty = false
	if p.head != nil {
		p.Reschedule(t)
	}
	p.release(t)
}

// changed places the waiting requests again at t after a setting changed, or, in a batch, notes
// that Commit must.
func (p *Pacer) changed(t int64) {
	if p.batching {
		p.dirty = true
		return
	}
	if p.head != nil {
		p.Reschedule(t)
	}
}

// released sends the waiting requests a new credit lets go at t, or, in a batch, leaves it to
// Commit.
func (p *Pacer) released(t int64) {
	if p.batching {
		p.dirty = true
		return
	}
	p.release(t)
}

// release sends the waiting requests the credit lets go at t.
func (p *Pacer) release(t int64) {
	if t < p.hold {
		return // the credit is spent after the hold
	}
	for r := p.head; r != nil && p.fitsInFlight() && p.fromCredit(r.cost); r = p.head {
		r.slot = t
		r.notify()
		p.unlink(r)
		p.send(t, r.cost, p.creditAfter(t, r.cost))
	}
	if p.head != nil {
		p.Reschedule(t)
	}
}

// cancel takes r out of the schedule at t and moves the requests behind it up.
func (p *Pacer) cancel(r *Reservation, t int64) {
	p.Settle(t)
	if !r.inList {
		return
	}
	p.unlink(r)
	p.Reschedule(t)
}

func (p *Pacer) unlink(r *Reservation) {
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

func (r *Reservation) notify() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Delay reports how long after now the reservation is due.
func (r *Reservation) Delay(now time.Time) time.Duration {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.clock(now)
	p.Settle(t)
	if !r.inList {
		return 0
	}
	return time.Duration(max(0, r.slot-t))
}

// Held reports whether the reservation waits for a hold or the window (a quota the server said is
// spent, a window of sends at its limit), beyond where the pace and the requests ahead of it would
// put it (throttle.HeldReservation).
func (r *Reservation) Held() bool {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.inList && r.held
}

// Changed returns a channel closed when the reservation's slot moves; nil once it is due or
// cancelled.
func (r *Reservation) Changed() <-chan struct{} {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.inList {
		return nil
	}
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Cancel gives a pending reservation back at now; the requests behind it move up. It is a no-op
// once the reservation is due.
func (r *Reservation) Cancel(now time.Time) {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cancel(r, p.clock(now))
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
