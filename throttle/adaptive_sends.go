package throttle

// sendRingSize bounds how many sent-but-unanswered requests an Adaptive limiter remembers. Beyond
// it the oldest are forgotten (their responses are then taken as sent recently, which can only
// make a throttle count as a new epoch a little early).
const sendRingSize = 256

// sendRing remembers when the requests that are in flight were sent, oldest first. Responses
// mostly come back in the order their requests left (they were paced evenly), so each observed
// response is matched with the oldest send: that tells the round-trip time and whether the
// request left before or after the last rate cut. A request that came due but was never sent
// (its key was paused at that instant) leaves an entry no response will match; entries older
// than the horizon passed to pop are dropped, so such strays do not linger.
type sendRing struct {
	times [sendRingSize]int64
	start int // index of the oldest entry
	n     int
}

func (r *sendRing) push(t int64) {
	if r.n == sendRingSize {
		r.start = (r.start + 1) % sendRingSize
		r.n--
	}
	r.times[(r.start+r.n)%sendRingSize] = t
	r.n++
}

// pop removes and returns the oldest send not older than horizon; ok is false when none is left.
func (r *sendRing) pop(horizon int64) (t int64, ok bool) {
	for r.n > 0 {
		t = r.times[r.start]
		r.start = (r.start + 1) % sendRingSize
		r.n--
		if t >= horizon {
			return t, true
		}
	}
	return 0, false
}

func (r *sendRing) len() int { return r.n }

// since counts the entries at or after t (the ring is in send order: it counts from the newest).
func (r *sendRing) since(t int64) int64 {
	n := int64(0)
	for i := r.n - 1; i >= 0 && r.times[(r.start+i)%sendRingSize] >= t; i-- {
		n++
	}
	return n
}

func (r *sendRing) reset() { r.start, r.n = 0, 0 }
