package algorithm

import "time"

// leakyBucket is the leaky bucket of NewLeakyBucket.
type leakyBucket struct{ bucket }

// NewLeakyBucket returns a leaky bucket that serves one request per interval I = c.Window/c.Limit
// from a queue of c.Burst places (c.Limit when zero).
//
// Semantics, in exact integer nanoseconds: every admitted request gets a slot s = max(t, s_last + I),
// where s_last is the slot of the previously admitted request; it is admitted iff s - t <= (Burst-1)*I,
// that is iff the backlog ahead of it (the queued work, in requests, counting the one being served by
// its unserved part) is at most Burst-1. A fresh key
// therefore admits exactly Burst requests at one instant (slots t, t+I, ..., t+(Burst-1)*I), and
// Limit per Window in the long run. n requests at once take n consecutive slots and are admitted
// iff the last of them is within reach. n > Burst is never admitted (RetryAfter is Never).
//
// In terms of docs/design.md's "admit iff s - t <= Q*I", the queue capacity is Q = Burst-1 places behind
// the request being served; nginx's limit_req with burst=Q and nodelay admits the same requests.
//
// As a meter the leaky bucket admits exactly what the token bucket with capacity Burst and the same
// rate admits (the classic equivalence); it differs in Decision.Delay = s - t, the time the admitted
// request would wait for its slot, rounded up to a whole nanosecond. A policing server answers at
// once; a shaping server holds the answer for Delay.
//
// Remaining is how many more requests the queue would take at the same instant; ResetAfter is the
// time until the queue is empty.
func NewLeakyBucket(c Config) (Algorithm, error) {
	p, err := c.validate(NameLeakyBucket, true)
	if err != nil {
		return nil, err
	}
	return &leakyBucket{bucket{p}}, nil
}

// Name returns "leaky-bucket".
func (*leakyBucket) Name() string { return NameLeakyBucket }

// Decide reports whether n requests at now fit in the queue in s, and their Delay, without changing s.
func (b *leakyBucket) Decide(s *State, now time.Time, n int64) Decision {
	return b.decide(s, now, n, true)
}

// Commit queues n requests at now into s.
func (b *leakyBucket) Commit(s *State, now time.Time, n int64) { b.commit(s, now, n) }

// Idle reports whether the queue in s is empty at now.
func (b *leakyBucket) Idle(s *State, now time.Time) bool { return b.idle(s, now) }
