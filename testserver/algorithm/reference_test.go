package algorithm

import (
	"math"
	"math/big"
	"time"
)

// This file holds reference models: each algorithm written again, from its documented definition,
// in math/big arithmetic and with the plainest data structures (a full history of admissions), so
// that the int64/128-bit implementations can be checked decision by decision on random traces,
// including parameters whose products overflow 64 bits. The models take increasing times only.

// refDecision is what a reference model predicts for one Decide.
type refDecision struct {
	allowed   bool
	remaining int64
	reset     time.Duration
	delay     time.Duration
}

// refModel is an independent model of one algorithm. p are the parameters of the algorithm deciding
// (they may change from step to step when a State is shared with a Scale'd algorithm).
type refModel interface {
	decide(p params, t, n int64) refDecision
	commit(p params, t, n int64)
}

// newRef returns the reference model for the algorithm called name.
func newRef(name string) refModel {
	switch name {
	case NameTokenBucket:
		return &refDeficit{owed: new(big.Rat)}
	case NameLeakyBucket:
		return &refDeficit{owed: new(big.Rat), delay: true}
	case NameFixedWindow:
		return &refHistory{kind: NameFixedWindow}
	case NameSlidingLog:
		return &refHistory{kind: NameSlidingLog}
	case NameSlidingWindow:
		return &refHistory{kind: NameSlidingWindow}
	}
	panic("no reference model for " + name)
}

func bi(x int64) *big.Int      { return big.NewInt(x) }
func br(x int64) *big.Rat      { return new(big.Rat).SetInt64(x) }
func frac(a, b int64) *big.Rat { return big.NewRat(a, b) }

// floorRat returns floor(x) for x >= 0, saturated to int64.
func floorRat(x *big.Rat) int64 {
	q := new(big.Int).Quo(x.Num(), x.Denom())
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// ceilRat returns ceil(x) for x >= 0 as a big.Int.
func ceilRat(x *big.Rat) *big.Int {
	q, r := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, bi(1))
	}
	return q
}

// refUntil is the duration from t to the instant abs, where instants saturate at math.MaxInt64.
func refUntil(abs *big.Int, t int64) time.Duration {
	if abs.Cmp(bi(math.MaxInt64)) > 0 {
		abs = bi(math.MaxInt64)
	}
	d := abs.Int64() - t
	if d < 0 {
		return 0
	}
	return time.Duration(d)
}

// refDeficit models both buckets as "requests owed": admitted and not yet paid back, paid back at
// Limit per Window by whichever algorithm decides, capacity Burst.
type refDeficit struct {
	owed  *big.Rat // requests owed at last
	last  int64
	delay bool
}

// at returns the requests owed at t (t >= last) under the rate of p.
func (m *refDeficit) at(p params, t int64) *big.Rat {
	paid := new(big.Rat).Mul(br(t-m.last), frac(p.limit, p.window))
	o := new(big.Rat).Sub(m.owed, paid)
	if o.Sign() < 0 {
		o.SetInt64(0)
	}
	return o
}

// drain returns the instant at which owed requests are paid back, starting at t.
func drain(p params, t int64, owed *big.Rat) *big.Int {
	ns := new(big.Rat).Mul(owed, frac(p.window, p.limit))
	return new(big.Int).Add(bi(t), ceilRat(ns))
}

func (m *refDeficit) decide(p params, t, n int64) refDecision {
	o := m.at(p, t)
	need := new(big.Rat).Add(o, br(n))
	if n <= p.burst && need.Cmp(br(p.burst)) <= 0 {
		d := refDecision{allowed: true, remaining: floorRat(new(big.Rat).Sub(br(p.burst), need)),
			reset: refUntil(drain(p, t, need), t)}
		if m.delay {
			d.delay = refUntil(drain(p, t, new(big.Rat).Sub(need, br(1))), t)
		}
		return d
	}
	rem := new(big.Rat).Sub(br(p.burst), o)
	if rem.Sign() < 0 {
		rem.SetInt64(0)
	}
	return refDecision{remaining: floorRat(rem), reset: refUntil(drain(p, t, o), t)}
}

func (m *refDeficit) commit(p params, t, n int64) {
	m.owed = new(big.Rat).Add(m.at(p, t), br(n))
	m.last = t
}

// refHistory models the window algorithms from the full history of admissions.
type refHistory struct {
	kind    string
	history []op // admissions, in order
}

// clamp returns x limited to the int64 range.
func clamp(x *big.Int) int64 {
	switch {
	case x.Cmp(bi(math.MaxInt64)) > 0:
		return math.MaxInt64
	case x.Cmp(bi(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return x.Int64()
}

// count returns the requests admitted in [from, to). Test times stay below math.MaxInt64, so
// clamping the bounds loses nothing.
func (m *refHistory) count(from, to *big.Int) int64 {
	lo, hi := clamp(from), clamp(to)
	var c int64
	for _, a := range m.history {
		if a.t >= lo && a.t < hi {
			c += a.n
		}
	}
	return c
}

func (m *refHistory) decide(p params, t, n int64) refDecision {
	W := bi(p.window)
	start := new(big.Int).Mul(new(big.Int).Quo(bi(t), W), W)
	end := new(big.Int).Add(start, W)
	switch m.kind {
	case NameFixedWindow:
		cur := m.count(start, end)
		d := refDecision{reset: refUntil(end, t), remaining: max(0, p.limit-cur)}
		if n <= p.limit && cur+n <= p.limit {
			d.allowed, d.remaining = true, p.limit-cur-n
		}
		return d
	case NameSlidingLog:
		// (t-W, t] is [t-W+1, t+1) in integer nanoseconds.
		from := new(big.Int).Sub(bi(t), W)
		from.Add(from, bi(1))
		in := m.count(from, bi(t+1))
		if n <= p.limit && in+n <= p.limit {
			return refDecision{allowed: true, remaining: p.limit - in - n,
				reset: refUntil(new(big.Int).Add(bi(t), W), t)}
		}
		d := refDecision{remaining: max(0, p.limit-in)}
		if in > 0 {
			d.reset = refUntil(new(big.Int).Add(bi(m.history[len(m.history)-1].t), W), t)
		}
		return d
	case NameSlidingWindow:
		cur := m.count(start, end)
		prev := m.count(new(big.Int).Sub(start, W), start)
		e := new(big.Int).Sub(bi(t), start)
		weight := new(big.Int).Mul(bi(prev), new(big.Int).Sub(W, e))
		room := new(big.Int).Sub(new(big.Int).Mul(bi(p.limit), W), weight)
		fits := int64(0)
		if room.Sign() > 0 {
			fits = new(big.Int).Quo(room, W).Int64()
		}
		if n <= p.limit && cur+n <= fits {
			return refDecision{allowed: true, remaining: fits - cur - n,
				reset: refUntil(new(big.Int).Add(end, W), t)}
		}
		d := refDecision{remaining: max(0, fits-cur)}
		switch {
		case cur > 0:
			d.reset = refUntil(new(big.Int).Add(end, W), t)
		case prev > 0:
			d.reset = refUntil(end, t)
		}
		return d
	}
	panic("unknown kind " + m.kind)
}

func (m *refHistory) commit(_ params, t, n int64) {
	m.history = append(m.history, op{t, n})
}

// refSchedule models the leaky bucket literally as docs/design.md states it: each admitted request gets
// the slot s = max(t, s_last + I), I = Window/Limit, and is admitted iff s - t <= (Burst-1)*I.
type refSchedule struct {
	last *big.Rat // slot of the last admitted request, nil before the first
}

// first returns the slot the next request arriving at t would get.
func (m *refSchedule) first(p params, t int64) *big.Rat {
	if m.last == nil {
		return br(t)
	}
	s := new(big.Rat).Add(m.last, frac(p.window, p.limit))
	if s.Cmp(br(t)) < 0 {
		return br(t)
	}
	return s
}

// fit returns how many more requests arriving at t would get a slot within reach, the first of them
// at slot first.
func fit(p params, t int64, first *big.Rat) int64 {
	interval := frac(p.window, p.limit)
	reach := new(big.Rat).Mul(br(p.burst-1), interval)
	wait := new(big.Rat).Sub(first, br(t))
	if wait.Cmp(reach) > 0 {
		return 0
	}
	return floorRat(new(big.Rat).Quo(new(big.Rat).Sub(reach, wait), interval)) + 1
}

func (m *refSchedule) decide(p params, t, n int64) refDecision {
	interval := frac(p.window, p.limit)
	first := m.first(p, t)
	lastSlot := new(big.Rat).Add(first, new(big.Rat).Mul(br(n-1), interval))
	if n <= p.burst && n <= fit(p, t, first) {
		empty := new(big.Rat).Add(lastSlot, interval) // the queue is empty once the last slot has passed
		return refDecision{allowed: true,
			remaining: fit(p, t, empty),
			reset:     refUntil(ceilRat(empty), t),
			delay:     refUntil(ceilRat(lastSlot), t)}
	}
	d := refDecision{remaining: fit(p, t, first)}
	if m.last != nil {
		d.reset = refUntil(ceilRat(new(big.Rat).Add(m.last, interval)), t)
	}
	return d
}

func (m *refSchedule) commit(p params, t, n int64) {
	first := m.first(p, t)
	m.last = new(big.Rat).Add(first, new(big.Rat).Mul(br(n-1), frac(p.window, p.limit)))
}
