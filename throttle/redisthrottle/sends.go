package redisthrottle

import (
	"sync"
	"time"
)

// sendRingSize bounds how many booked-but-unanswered requests a learning limiter remembers.
// Beyond it the oldest are forgotten.
const sendRingSize = 256

// sendHorizon is how long a booked request is remembered: a response is not expected later than
// this after its request was due.
const sendHorizon = int64(10 * time.Second)

// send is one booked request: when it was due (ns on the caller's clock) and the epoch (the shared
// cut count) it was booked in.
type send struct {
	due   int64
	epoch int64
}

// sendRing remembers the requests a process booked and has not heard back about, oldest first.
// Responses mostly come back in the order their requests left (they were paced evenly), so each
// observed response is matched with the oldest booking: that tells the epoch its request was
// booked in, and so whether a throttle answers a request booked before the last cut (which must
// not cut again). A booking whose request never went out (given back, or refused by the caller)
// leaves an entry no response matches; entries older than sendHorizon are dropped, and a
// mismatch can only attribute a throttle to an older epoch, which errs on the side of not
// cutting twice. It is safe for concurrent use.
type sendRing struct {
	mu    sync.Mutex
	sends [sendRingSize]send
	start int // index of the oldest entry
	n     int
}

// push remembers a booking.
func (r *sendRing) push(due, epoch int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == sendRingSize {
		r.start = (r.start + 1) % sendRingSize
		r.n--
	}
	r.sends[(r.start+r.n)%sendRingSize] = send{due, epoch}
	r.n++
}

// pop removes and returns the oldest booking that was due no earlier than sendHorizon before now
// (ns); ok is false when none is left.
func (r *sendRing) pop(now int64) (s send, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.n > 0 {
		s = r.sends[r.start]
		r.start = (r.start + 1) % sendRingSize
		r.n--
		if s.due >= now-sendHorizon {
			return s, true
		}
	}
	return send{}, false
}
