package algorithm

import "time"

// slidingLog is the sliding window log of NewSlidingLog.
//
// Its State is a ring of entries in s.Log, two int64s each: an admission time (Unix nanoseconds,
// ascending) and the running total of requests admitted up to and including that time. Requests
// admitted at the same instant share one entry, so n requests at once cost one entry, not n. s.Head
// is the index of the oldest entry, s.B the number of entries in use, and s.C the running total just
// before the oldest entry; the count in any stretch of the log is a difference of running totals
// (computed modulo 2^64, which is exact because no stretch holds 2^64 requests).
type slidingLog struct{ params }

// NewSlidingLog returns a sliding window log: at most c.Limit requests in any window of length
// c.Window. c.Burst must be 0 or c.Limit.
//
// Semantics, in exact integer nanoseconds: n requests at t are admitted iff the number admitted in
// (t-Window, t] plus n is at most Limit. The log keeps only admitted timestamps (one entry per
// instant, with the number admitted then) and forgets those that left the window, so it never holds
// more than Limit entries; its ring buffer is allocated on first use and grown by doubling, never
// beyond Limit entries (16 bytes each). n > Limit is never admitted (RetryAfter is Never); any other
// denial retries exactly when enough old entries have left the window.
//
// Remaining is Limit minus the requests in the window after the decision; ResetAfter is the time
// until the newest entry leaves the window. A late caller (now before the newest entry) is counted
// at the newest entry's time.
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
	log  []int64 // entries: log[2i] time, log[2i+1] running total
	size int     // entries that fit in log
	head int     // index of the oldest entry
	n    int     // entries in use
	base uint64  // running total before the oldest entry
}

// load sets r to the ring stored in s. (The ring is loaded in place, as Decisions are decided in
// place: see bucket.decideAt.)
func (r *ring) load(s *State) {
	r.log, r.base = s.Log, uint64(s.C)
	r.size = len(s.Log) / 2
	if r.size == 0 {
		r.head, r.n = 0, 0
		return
	}
	r.head = s.Head
	if uint(r.head) >= uint(r.size) { // only a corrupted State: no division on the common path
		r.head %= r.size
		if r.head < 0 {
			r.head += r.size
		}
	}
	r.n = int(min(max(s.B, 0), int64(r.size)))
}

// store writes r back into s.
func (r *ring) store(s *State) {
	s.Log, s.Head, s.B, s.C = r.log, r.head, int64(r.n), int64(r.base)
}

// slot returns the position in r.log of the i-th oldest entry, 0 <= i < r.n.
func (r *ring) slot(i int) int {
	j := r.head + i
	if j >= r.size {
		j -= r.size
	}
	return 2 * j
}

// time returns the time of the i-th oldest entry.
func (r *ring) time(i int) int64 { return r.log[r.slot(i)] }

// total returns the running total before the i-th oldest entry, 0 <= i <= r.n.
func (r *ring) total(i int) uint64 {
	if i == 0 {
		return r.base
	}
	return uint64(r.log[r.slot(i-1)+1])
}

// search returns the smallest i in [lo, r.n) with !before(i), or r.n; before must be monotone.
//
// It gallops from lo (probing lo, lo+1, lo+3, lo+7, ...) before it bisects what is left, so it
// costs O(log(i-lo)) probes, the first of them next to lo. The answers sought lie near the oldest
// entries (those that just left the window, or that must leave for a retry), while a busy key's
// ring can hold millions of entries: bisecting all of it would reach memory the caches do not hold
// at nearly every probe.
func (r *ring) search(lo int, before func(int) bool) int {
	hi := r.n
	for step := 1; lo < hi; step *= 2 {
		p := min(lo+step-1, hi-1)
		if !before(p) {
			hi = p
			break
		}
		lo = p + 1
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if before(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// view loads the ring in s into r and returns the effective time for now (the newest entry's time
// for a late caller), how many of the oldest entries have left the window (t-Window, t], and how
// many requests the entries still in it hold.
func (l *slidingLog) view(r *ring, s *State, now int64) (t int64, expired int, inWindow int64) {
	r.load(s)
	t = now
	if r.n > 0 {
		t = max(t, r.time(r.n-1))
	}
	cutoff := t - l.window // t >= 0 and window > 0: no overflow
	expired = r.search(0, func(i int) bool { return r.time(i) <= cutoff })
	return t, expired, int64(min(r.total(r.n)-r.total(expired), 1<<63-1))
}

// Decide reports whether n more requests fit in the window ending at now, without changing s.
func (l *slidingLog) Decide(s *State, now time.Time, n int64) (dec Decision) {
	t := nanos(now)
	var r ring
	at, expired, inWindow := l.view(&r, s, t)
	l.decideAt(&dec, &r, t, at, expired, inWindow, atLeastOne(n))
	return dec
}

// decideAt decides into dec, a zero Decision, n >= 1 requests at t given the view of the ring r at
// the effective time at (see view, and bucket.decideAt for why into a pointer).
func (l *slidingLog) decideAt(dec *Decision, r *ring, t, at int64, expired int, inWindow, n int64) {
	dec.Limit = l.limit
	if n <= l.limit && inWindow <= l.limit-n {
		dec.Allowed = true
		dec.Remaining = l.limit - inWindow - n
		dec.ResetAfter = until(addSat(at, l.window), t)
		return
	}
	dec.Remaining = max(0, l.limit-inWindow)
	if inWindow > 0 {
		dec.ResetAfter = until(addSat(r.time(r.n-1), l.window), t)
	}
	if n > l.limit {
		dec.RetryAfter = Never
		return
	}
	// The oldest entries holding at least inWindow+n-limit requests must leave; the last of them
	// leaves at its time + Window.
	need := uint64(inWindow + n - l.limit)
	from := r.total(expired)
	j := r.search(expired, func(i int) bool { return r.total(i+1)-from < need })
	j = min(j, r.n-1) // only a corrupted State can miss
	dec.RetryAfter = until(addSat(r.time(j), l.window), t)
}

// Commit logs n requests admitted at now into s, forgetting entries that left the window.
func (l *slidingLog) Commit(s *State, now time.Time, n int64) {
	var r ring
	at, expired, _ := l.view(&r, s, nanos(now))
	l.commitAt(s, &r, at, expired, atLeastOne(n))
}

// take is Take into dec, a zero Decision: Decide and, when allowed, Commit, on one view of the
// ring.
func (l *slidingLog) take(dec *Decision, s *State, now time.Time, n int64) {
	t := nanos(now)
	n = atLeastOne(n)
	var r ring
	at, expired, inWindow := l.view(&r, s, t)
	l.decideAt(dec, &r, t, at, expired, inWindow, n)
	if dec.Allowed {
		l.commitAt(s, &r, at, expired, n)
	}
}

// commitAt logs n >= 1 requests at the effective time at into s, whose ring r has expired entries
// that left the window (see view).
func (l *slidingLog) commitAt(s *State, r *ring, at int64, expired int, n int64) {
	r.drop(expired)
	total := r.total(r.n) + uint64(n)
	if r.n > 0 && r.time(r.n-1) == at {
		r.log[r.slot(r.n-1)+1] = int64(total) // same instant: one entry
		r.store(s)
		return
	}
	if r.n == r.size {
		// At most max(Limit, current size) entries: with Commit after an allowing Decide the log
		// never needs more, and otherwise (misuse) the oldest entry is forgotten first.
		capacity := int(min(max(l.limit, int64(r.size)), int64(maxEntries)))
		if r.size < capacity {
			r.grow(min(capacity, max(2*r.size, 4)))
		} else {
			r.drop(1)
		}
	}
	i := r.slot(r.n)
	r.log[i], r.log[i+1] = at, int64(total)
	r.n++
	r.store(s)
}

// maxEntries bounds the ring so that its byte size fits in an int.
const maxEntries = int(^uint(0)>>1) / 16

// drop forgets the k oldest entries.
func (r *ring) drop(k int) {
	if k <= 0 {
		return
	}
	r.base = r.total(k)
	r.head += k
	if r.head >= r.size {
		r.head -= r.size
	}
	r.n -= k
}

// grow moves the ring into a new buffer of size entries, oldest first.
func (r *ring) grow(size int) {
	log := make([]int64, 2*size)
	for i := range r.n {
		j := r.slot(i)
		log[2*i], log[2*i+1] = r.log[j], r.log[j+1]
	}
	r.log, r.size, r.head = log, size, 0
}

// Idle reports whether no request of s is in the window ending at now (or later).
func (l *slidingLog) Idle(s *State, now time.Time) bool {
	var r ring
	_, _, inWindow := l.view(&r, s, nanos(now))
	return inWindow == 0
}
