package algorithm

import "time"

// slidingWindow is the sliding window counter of NewSlidingWindow. Its State is s.A, the start of the
// current window (Unix nanoseconds), s.B, the requests admitted in it, and s.C, those admitted in the
// window before it.
type slidingWindow struct{ params }

// NewSlidingWindow returns a sliding window counter (the approximation Cloudflare described): c.Limit
// requests per c.Window, estimated from two epoch-aligned fixed windows. c.Burst must be 0 or c.Limit.
//
// Semantics, in exact integer arithmetic: at elapsed time e into the current window, with prev
// requests counted in the previous window and cur in the current one, n requests are admitted iff
// prev*(W-e) + (cur+n)*W <= Limit*W, that is iff the previous window weighted by its overlap with the
// sliding window (t-W, t], plus the current one, stays within Limit. Products are computed in 128
// bits, so no Limit or Window can overflow. The estimate assumes the previous window's requests were
// spread evenly. It never admits more than Limit inside one window (so at most 2*Limit in any window
// of length W); against the exact sliding log on random traffic it decides differently on about 2%
// of requests at half the limit and up to a third under overload — mostly in which requests it
// admits, not how many: throughput stays within 8% of the log's and its busiest sliding window at
// 1.4*Limit, as the tests measure and report. n > Limit is never admitted (RetryAfter is Never); any other denial retries exactly when the weighted count allows it.
//
// Remaining is how many more requests the formula admits at the same instant; ResetAfter is the time
// until neither window weighs on the count (the end of the next window when the current one has
// requests). A late caller (now in a window before the current one) is counted at the current
// window's start.
func NewSlidingWindow(c Config) (Algorithm, error) {
	p, err := c.validate(NameSlidingWindow, false)
	if err != nil {
		return nil, err
	}
	return &slidingWindow{p}, nil
}

// Name returns "sliding-window".
func (*slidingWindow) Name() string { return NameSlidingWindow }

// Limit is the quota per sliding window.
func (w *slidingWindow) Limit() int64 { return w.limit }

// Window is the window length.
func (w *slidingWindow) Window() time.Duration { return time.Duration(w.window) }

// Burst is the limit: a fresh key admits all of it at once.
func (w *slidingWindow) Burst() int64 { return w.limit }

// counts returns the start of the current window for now, the elapsed time into it, and the counts
// of the current and previous windows, rolling the State's windows forward as time requires.
func (w *slidingWindow) counts(s *State, now int64) (start, elapsed, cur, prev int64) {
	last := max(s.A, 0)
	start = max(floorTo(now, w.window), last)
	elapsed = max(now-start, 0)
	switch start - last {
	case 0:
		return start, elapsed, max(s.B, 0), max(s.C, 0)
	case w.window:
		return start, elapsed, 0, max(s.B, 0)
	}
	return start, elapsed, 0, 0
}

// Decide reports whether n more requests fit in the sliding window ending at now, without changing s.
func (w *slidingWindow) Decide(s *State, now time.Time, n int64) (dec Decision) {
	t := nanos(now)
	start, e, cur, prev := w.counts(s, t)
	w.decideAt(&dec, t, start, e, cur, prev, atLeastOne(n))
	return dec
}

// decideAt decides into dec, a zero Decision, n >= 1 requests at t, e into the window starting at
// start, with the counts cur and prev of the current and previous windows (see bucket.decideAt
// for why into a pointer).
func (w *slidingWindow) decideAt(dec *Decision, t, start, e, cur, prev, n int64) {
	weight := mul(prev, w.window-e)            // previous window's share, in request-nanoseconds
	room := mul(w.limit, w.window).sub(weight) // what the current window may still hold
	fits := room.div(w.window)                 // whole requests the current window may hold
	dec.Limit = w.limit
	if n <= fits && cur <= fits-n {
		dec.Allowed = true
		dec.Remaining = fits - cur - n
		dec.ResetAfter = until(addSat(addSat(start, w.window), w.window), t)
		return
	}
	dec.Remaining = max(0, fits-cur)
	switch {
	case cur > 0:
		dec.ResetAfter = until(addSat(addSat(start, w.window), w.window), t)
	case prev > 0:
		dec.ResetAfter = until(addSat(start, w.window), t)
	}
	if n > w.limit {
		dec.RetryAfter = Never
		return
	}
	dec.RetryAfter = until(w.retryAt(start, cur, prev, n), t)
}

// retryAt returns the earliest instant at which n requests are admitted, given a denial now in the
// window starting at start with counts cur and prev, and n <= Limit.
func (w *slidingWindow) retryAt(start, cur, prev, n int64) int64 {
	next := addSat(start, w.window)
	if cur > w.limit-n {
		// The current window can never take them; in the next one cur becomes the previous count
		// and they are admitted at the smallest e with cur*(W-e) <= (Limit-n)*W.
		return addSat(next, w.window-min(mul(w.limit-n, w.window).div(cur), w.window))
	}
	// Within this window: the smallest e with prev*(W-e) <= (Limit-cur-n)*W. prev > 0 here, or the
	// request would have been admitted; e = W is the next window's start, where it always fits.
	return addSat(start, w.window-min(mul(w.limit-cur-n, w.window).div(prev), w.window))
}

// Commit counts n requests at now into s, rolling its windows forward.
func (w *slidingWindow) Commit(s *State, now time.Time, n int64) {
	start, _, cur, prev := w.counts(s, nanos(now))
	s.A, s.B, s.C = start, addSat(cur, atLeastOne(n)), prev
}

// take is Take into dec, a zero Decision: Decide and, when allowed, Commit, counting once.
func (w *slidingWindow) take(dec *Decision, s *State, now time.Time, n int64) {
	t := nanos(now)
	n = atLeastOne(n)
	start, e, cur, prev := w.counts(s, t)
	w.decideAt(dec, t, start, e, cur, prev, n)
	if dec.Allowed {
		s.A, s.B, s.C = start, addSat(cur, n), prev
	}
}

// Idle reports whether neither window counts anything at now.
func (w *slidingWindow) Idle(s *State, now time.Time) bool {
	_, _, cur, prev := w.counts(s, nanos(now))
	return cur == 0 && prev == 0
}
