package algorithm

import "time"

// slidingLog is the sliding window log of NewSlidingLog. Its State keeps the admission times (Unix
// nanoseconds, oldest first) in the ring s.Log, starting at s.Head, with s.B entries in use.
type slidingLog struct{ params }

// NewSlidingLog returns a sliding window log: at most c.Limit requests in any window of length
// c.Window. c.Burst must be 0 or c.Limit.
//
// Semantics, in exact integer nanoseconds: n requests at t are admitted iff the number admitted in
// (t-Window, t] plus n is at most Limit. The log keeps only admitted timestamps and forgets those
// that left the window, so it never holds more than Limit entries; its ring buffer is allocated on
// first use and grown by doubling up to Limit entries, never beyond. n > Limit is never admitted
// (RetryAfter is Never); any other denial retries exactly when enough old entries have left the
// window.
//
// Remaining is Limit minus the entries in the window after the decision; ResetAfter is the time until
// the newest entry leaves the window. A late caller (now before the newest entry) is counted at the
// newest entry's time.
func NewSlidingLog(c Config) (Algorithm, error) {
	p, err := c.validate(NameSlidingLog, false)
	if err != nil {
		return nil, err
	}
	return &slidingLog{p}, nil
}

// Name returns "sliding-log".
func (*slidingLog) Name() string { return NameSlidingLog }

// Limit is the most requests admitted in any window.
func (l *slidingLog) Limit() int64 { return l.limit }

// Window is the window length.
func (l *slidingLog) Window() time.Duration { return time.Duration(l.window) }

// Burst is the limit: a fresh key admits all of it at once.
func (l *slidingLog) Burst() int64 { return l.limit }

// ring is a view of the log in a State, sanitised so that no State can make it index out of range.
type ring struct {
	log  []int64
	head int // index of the oldest entry
	n    int // entries in use
}

// ringOf returns the ring stored in s.
func ringOf(s *State) ring {
	size := len(s.Log)
	if size == 0 {
		return ring{}
	}
	head := s.Head % size
	if head < 0 {
		head += size
	}
	return ring{log: s.Log, head: head, n: int(min(max(s.B, 0), int64(size)))}
}

// at returns the i-th oldest entry, 0 <= i < r.n.
func (r *ring) at(i int) int64 {
	j := r.head + i
	if j >= len(r.log) {
		j -= len(r.log)
	}
	return r.log[j]
}

// after returns how many of the oldest entries are at or before cutoff (the entries are ascending).
func (r *ring) after(cutoff int64) int {
	lo, hi := 0, r.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r.at(mid) <= cutoff {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// view returns the ring in s, the effective time for now (the newest entry's time for a late
// caller) and how many of its oldest entries have left the window (t-Window, t].
func (l *slidingLog) view(s *State, now int64) (r ring, t int64, expired int) {
	r = ringOf(s)
	t = now
	if r.n > 0 {
		t = max(t, r.at(r.n-1))
	}
	return r, t, r.after(t - l.window)
}

// Decide reports whether n more requests fit in the window ending at now, without changing s.
func (l *slidingLog) Decide(s *State, now time.Time, n int64) Decision {
	n = atLeastOne(n)
	t := nanos(now)
	r, at, expired := l.view(s, t)
	inWindow := int64(r.n - expired)
	dec := Decision{Limit: l.limit}
	if inWindow <= l.limit-n {
		dec.Allowed = true
		dec.Remaining = l.limit - inWindow - n
		dec.ResetAfter = until(addSat(at, l.window), t)
		return dec
	}
	dec.Remaining = max(0, l.limit-inWindow)
	if inWindow > 0 {
		dec.ResetAfter = until(addSat(r.at(r.n-1), l.window), t)
	}
	if n > l.limit {
		dec.RetryAfter = Never
		return dec
	}
	// The oldest inWindow+n-limit entries must leave; the last of them leaves at its time + Window.
	k := int(inWindow + n - l.limit)
	dec.RetryAfter = until(addSat(r.at(expired+k-1), l.window), t)
	return dec
}

// Commit logs n requests admitted at now into s, forgetting entries that left the window.
func (l *slidingLog) Commit(s *State, now time.Time, n int64) {
	r, at, expired := l.view(s, nanos(now))
	r.head += expired
	if r.head >= len(r.log) {
		r.head -= len(r.log)
	}
	r.n -= expired
	// The log holds at most max(Limit, its current size) entries: with Commit after an allowing
	// Decide the oldest never has to go, otherwise (misuse) the oldest are forgotten first.
	capacity := int(min(max(l.limit, int64(len(r.log))), int64(maxInt)))
	add := int(min(atLeastOne(n), int64(capacity)))
	if drop := r.n + add - capacity; drop > 0 {
		r.head = (r.head + drop) % len(r.log)
		r.n -= drop
	}
	if r.n+add > len(r.log) {
		r.grow(min(capacity, max(r.n+add, 2*len(r.log), 4)))
	}
	for range add {
		j := r.head + r.n
		if j >= len(r.log) {
			j -= len(r.log)
		}
		r.log[j] = at
		r.n++
	}
	s.Log, s.Head, s.B = r.log, r.head, int64(r.n)
}

// maxInt is the largest int.
const maxInt = int(^uint(0) >> 1)

// grow moves the ring into a new buffer of size entries, oldest first.
func (r *ring) grow(size int) {
	log := make([]int64, size)
	for i := range r.n {
		log[i] = r.at(i)
	}
	r.log, r.head = log, 0
}

// Idle reports whether no entry of s is in the window ending at now (or later).
func (l *slidingLog) Idle(s *State, now time.Time) bool {
	r, _, expired := l.view(s, nanos(now))
	return r.n == expired
}
