package learn

// admittedLog remembers the send times of the latest admitted requests of a quota whose window the
// server did not say, in send order, so that what the server admitted bounds its rate from below
// where the window read from its resets says less.
//
// The model: a quota of L per W, of any kind, admits at most 2L in a moment and L more per W after
// it. A fixed window admits L before its end and L after it, then L per W; a sliding log, a
// sliding window counter and a bucket of capacity L admit less. A bucket that holds more than L
// (its remaining counts say so) admits its capacity C in a moment instead, so hold = 2·max(L, C)
// bounds every kind. Requests admitted in a span of the server's time Δ number then at most
// hold + ρΔ, with ρ = L/W the rate: A admitted in Δ show ρ ≥ (A − hold)/Δ.
//
// Where the window is read from the resets, it is the longest reset less its grain, rounded up to
// a second: a bucket that is full again in 50 ms (throttled/throttled v2's GCRA at 20/s, whose
// reset is the time until full, rounded up to whole seconds) says a second, and its limit (the
// burst) per that second was the pace: 2.5x the server's rate at a burst of 5. Its admissions say
// more: spending what the counts said remained, the client was admitted 8 in 200 ms, and in 64
// admissions over a few seconds the bound rises past the pace it was read as; paced at the new
// bound, more is admitted, and the bound climbs to the rate. A server that keeps L per W as read
// never admits more than the bound allows, so the rule never moves it: the bound is the model's
// own, for a fixed window as for a bucket. Another client on the key only takes admissions from
// this one, and a lower bound stays one.
//
// Send times stand for arrival times: the requests sent between two sends reached the server
// within the sends' span plus the one-way trip's spread (reorderMargin), which the span counts.
type admittedLog struct {
	sent [admittedLogSize]int64 // a ring, ascending from index n-admittedLogSize (or 0)
	n    int64                  // admissions recorded in all
}

// admittedLogSize is how many admissions the bound looks back over. A client held by the window
// lane at L per W read is admitted at that rate plus what its credit adds; the bound passes the
// read rate only where that excess, over the span, exceeds the hold 2L, so the longer the span the
// smaller the excess it sees: against throttled's 50/s with a burst of 16 on loopback, admitted
// 18/s against a lane of 16/s, 256 admissions (14 s) read 15.9/s and never moved; 1,024 (57 s)
// read (1024 − 32)/57 = 17.4/s. Kept busy, the bound reads (n − 2L)/n of the rate admitted, 31/32
// for L up to 16. Where the credit adds too little (a burst of 20 at 200/s with 4 workers) or 2L
// passes the log (a limit of 512 or more), the lane keeps the window read (a known miss, see
// docs/learner-measurements.md). 8 KiB a key, as the send log is 40; the spans are scanned once
// per admitted answer of such a quota only, nine at most.
const admittedLogSize = 1024

// add records the admission of a request sent at sent. Answers come back out of send order by a
// few places at most; an admission older than every one the ring holds is dropped.
func (a *admittedLog) add(sent int64) {
	lo := max(a.n-admittedLogSize, 0)
	if a.n-lo == admittedLogSize && sent < a.sent[lo%admittedLogSize] {
		return
	}
	i := a.n
	for ; i > lo && a.sent[(i-1)%admittedLogSize] > sent; i-- {
		a.sent[i%admittedLogSize] = a.sent[(i-1)%admittedLogSize]
	}
	a.sent[i%admittedLogSize] = sent
	a.n++
}

// reset forgets every admission: a new quota was said.
func (a *admittedLog) reset() { a.n = 0 }

// floorRate returns the least rate, in requests per nanosecond, of a server that admits at most
// hold requests in a moment and that admitted the recorded requests (see admittedLog), over the
// spans that end at the latest send, each widened by margin, the one-way trip's spread; 0 when
// no span admitted more than hold. It also returns the admissions and the span that give it.
//
// The spans hold all the admissions recorded, then half as many, and so on down to just over
// the hold: nine spans at most (the hold is at least 2). The longest, whose hold weighs least, is the one a steady stream
// reads by; the shorter ones read a rise sooner. Every span's reading is a bound, so skipping
// spans only reads less.
func (a *admittedLog) floorRate(hold, margin int64) (rate float64, admitted, span int64) {
	held := min(a.n, admittedLogSize)
	if held <= hold {
		return 0, 0, 0
	}
	last := a.sent[(a.n-1)%admittedLogSize]
	for k := held; k > hold; k /= 2 {
		d := last - a.sent[(a.n-k)%admittedLogSize] + margin // k admissions up to the latest
		if d <= 0 {
			continue
		}
		if r := float64(k-hold) / float64(d); r > rate {
			rate, admitted, span = r, k, d
		}
	}
	return rate, admitted, span
}
