package algorithm

import "time"

// fixedWindow is the fixed window counter of NewFixedWindow. Its State is s.A, the start of the
// window last counted in (Unix nanoseconds), and s.B, the requests admitted in it.
type fixedWindow struct{ params }

// NewFixedWindow returns a fixed window counter: c.Limit requests per window of length c.Window,
// windows aligned to the Unix epoch ([k*Window, (k+1)*Window) for whole k). c.Burst must be 0 or
// c.Limit.
//
// Semantics: n requests at t in window w are admitted iff count_w + n <= Limit; a window's count
// starts at zero. A fresh key admits Limit at one instant; two full windows back to back admit up to
// 2*Limit within any interval of length Window that straddles their boundary, and never more than
// Limit inside one window. n > Limit is never admitted (RetryAfter is Never); any other denial
// retries at the start of the next window.
//
// Remaining is Limit - count_w after the decision; ResetAfter is the time until the window ends.
// A caller whose now lies in a window before the one last counted (a late caller) is counted in the
// later window.
func NewFixedWindow(c Config) (Algorithm, error) {
	p, err := c.validate(NameFixedWindow, false)
	if err != nil {
		return nil, err
	}
	return &fixedWindow{p}, nil
}

// Name returns "fixed-window".
func (*fixedWindow) Name() string { return NameFixedWindow }

// Limit is the quota per window.
func (w *fixedWindow) Limit() int64 { return w.limit }

// Window is the window length.
func (w *fixedWindow) Window() time.Duration { return time.Duration(w.window) }

// Burst is the limit: a fresh window admits all of it at once.
func (w *fixedWindow) Burst() int64 { return w.limit }

// count returns the start of the window now counts in and the requests already admitted in it.
func (w *fixedWindow) count(s *State, now int64) (start, count int64) {
	start = max(floorTo(now, w.window), s.A)
	if start == s.A {
		return start, max(s.B, 0)
	}
	return start, 0
}

// Decide reports whether n more requests fit in now's window, without changing s.
func (w *fixedWindow) Decide(s *State, now time.Time, n int64) (dec Decision) {
	t := nanos(now)
	start, count := w.count(s, t)
	w.decideAt(&dec, t, start, count, atLeastOne(n))
	return dec
}

// decideAt decides into dec, a zero Decision, n >= 1 requests at t, counted in the window starting
// at start, which holds count (see bucket.decideAt for why into a pointer).
func (w *fixedWindow) decideAt(dec *Decision, t, start, count, n int64) {
	end := addSat(start, w.window)
	dec.Limit, dec.ResetAfter = w.limit, until(end, t)
	switch {
	case n > w.limit:
		dec.Remaining = max(0, w.limit-count)
		dec.RetryAfter = Never
	case count <= w.limit-n:
		dec.Allowed = true
		dec.Remaining = w.limit - count - n
	default:
		dec.Remaining = max(0, w.limit-count)
		dec.RetryAfter = until(end, t)
	}
}

// Commit counts n requests at now into s.
func (w *fixedWindow) Commit(s *State, now time.Time, n int64) {
	start, count := w.count(s, nanos(now))
	s.A, s.B = start, addSat(count, atLeastOne(n))
}

// take is Take into dec, a zero Decision: Decide and, when allowed, Commit, counting once.
func (w *fixedWindow) take(dec *Decision, s *State, now time.Time, n int64) {
	t := nanos(now)
	n = atLeastOne(n)
	start, count := w.count(s, t)
	w.decideAt(dec, t, start, count, n)
	if dec.Allowed {
		s.A, s.B = start, addSat(count, n)
	}
}

// Idle reports whether nothing is counted in now's window (or later).
func (w *fixedWindow) Idle(s *State, now time.Time) bool {
	_, count := w.count(s, nanos(now))
	return count == 0
}
