package algorithm

import "time"

// bucket is the exact arithmetic shared by the token bucket and the leaky bucket, which as meters
// are the same algorithm (GCRA); the leaky bucket adds the queue delay.
//
// The state is a deficit D: how far the bucket is below full, in units where one request is worth
// window nanoseconds, so that the bucket refills exactly limit units per nanosecond and every
// quantity is an integer. D is stored as of the time s.A (Unix nanoseconds) in the registers s.B
// (high 64 bits) and s.C (low 64 bits). The zero State has no deficit: a full bucket.
//
// Because the unit of D depends only on the window, a bucket scaled to another limit (Scale) reads
// the same State with the same meaning: D/window is the number of requests admitted and not yet
// paid back.
type bucket struct {
	params
}

// deficit returns the effective time (now, or the State's last update if now is earlier, so that a
// late caller is never handed refills it did not wait for) and the deficit at that time.
func (b *bucket) deficit(s *State, now int64) (int64, u128) {
	last := max(s.A, 0)
	at := max(now, last)
	d := u128{uint64(s.B), uint64(s.C)}
	if d.isZero() {
		return at, d
	}
	return at, d.sub(mul(at-last, b.limit))
}

// decide is Decide for both buckets; delay is true for the leaky bucket.
func (b *bucket) decide(s *State, now time.Time, n int64, delay bool) (dec Decision) {
	t := nanos(now)
	at, d := b.deficit(s, t)
	b.decideAt(&dec, t, at, d, atLeastOne(n), delay)
	return dec
}

// decideAt decides into dec, a zero Decision, n >= 1 requests at t given the deficit d at the
// effective time at (see deficit); need is the deficit once they are admitted.
//
// The algorithms decide into a *Decision rather than return one: a Decision is too large for the
// compiler to keep in registers, and each copy of a Decision that was just written field by field
// stalls the processor (its 16-byte loads cannot be forwarded from the 8-byte stores), a tenth of
// a store's decision per copy.
func (b *bucket) decideAt(dec *Decision, t, at int64, d u128, n int64, delay bool) (need u128) {
	full := mul(b.burst, b.window)
	dec.Limit = b.limit
	if n > b.burst {
		dec.Remaining = full.sub(d).div(b.window)
		dec.ResetAfter = until(addSat(at, d.divCeil(b.limit)), t)
		dec.RetryAfter = Never
		return need
	}
	need = d.add(mul(n, b.window))
	if need.cmp(full) <= 0 {
		dec.Allowed = true
		dec.Remaining = full.sub(need).div(b.window)
		dec.ResetAfter = until(addSat(at, need.divCeil(b.limit)), t)
		if delay {
			// The first of the n requests takes the slot d/limit after at, the last (n-1) intervals
			// later; a slot between two nanoseconds is served at the later one.
			dec.Delay = until(addSat(at, need.sub(from(b.window)).divCeil(b.limit)), t)
		}
		return need
	}
	dec.Remaining = full.sub(d).div(b.window)
	dec.ResetAfter = until(addSat(at, d.divCeil(b.limit)), t)
	dec.RetryAfter = until(addSat(at, need.sub(full).divCeil(b.limit)), t)
	return need
}

// commit is Commit for both buckets.
func (b *bucket) commit(s *State, now time.Time, n int64) {
	at, d := b.deficit(s, nanos(now))
	b.store(s, at, d.add(mul(atLeastOne(n), b.window)))
}

// take is Take for both buckets, into dec, a zero Decision.
func (b *bucket) take(dec *Decision, s *State, now time.Time, n int64, delay bool) {
	t := nanos(now)
	at, d := b.deficit(s, t)
	need := b.decideAt(dec, t, at, d, atLeastOne(n), delay)
	if dec.Allowed {
		b.store(s, at, need)
	}
}

// store records the deficit d as of at in s.
func (*bucket) store(s *State, at int64, d u128) {
	s.A, s.B, s.C = at, int64(d.hi), int64(d.lo)
}

// idle reports whether the bucket is full at now.
func (b *bucket) idle(s *State, now time.Time) bool {
	_, d := b.deficit(s, nanos(now))
	return d.isZero()
}

// Limit is the refill quota per Window.
func (b *bucket) Limit() int64 { return b.limit }

// Window is the period over which Limit requests are refilled.
func (b *bucket) Window() time.Duration { return time.Duration(b.window) }

// Burst is the capacity: how many requests a fresh key admits at one instant.
func (b *bucket) Burst() int64 { return b.burst }
