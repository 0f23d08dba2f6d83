package learn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrBadLawState reports a RateLaw state that UnmarshalBinary cannot read: another format version,
// a truncated value, or values no law can hold.
var ErrBadLawState = errors.New("learn: bad rate law state")

// lawFormat is the version of the encoding; a state of another version is refused.
const lawFormat = 2

// rateStates are the rate strategy's states, encoded by index ("" before the first throttle).
var rateStates = []string{"", "search", "bisect", "recover", "cruise", "probe"}

// lawWire is the encoded state: the rate strategy's fields and the evidence it reads (the counts
// and the success log). The configuration (tuning, rate bounds, initial rate) and the caller's
// round trip are not part of it: each caller brings its own.
type lawWire struct {
	Format                                    uint8
	State                                     uint8
	Active, Doubled, Fresh, CyclesDrove       bool
	Rate, Best, ProbeCredit, RCut, Gain, Wall float64
	Hi, Below                                 float64
	CutAt, CutSuccesses, Succ, Burst          int64
	FirstCutAt, FirstCutSuccesses, NCut       int64
	EpochThrottles, Quiet, CyclesUntil        int64
	Cuts                                      [longRunCuts][2]int64
	Successes, Throttles, SuccN               int64
	SuccAt                                    [successLogSize]int64
}

// MarshalBinary encodes the law's state (not its configuration nor the round trip it was given) in
// a few hundred bytes. It never fails.
func (l *RateLaw) MarshalBinary() ([]byte, error) {
	r := &l.r
	w := lawWire{
		Format: lawFormat, State: uint8(max(slices.Index(rateStates, r.st), 0)),
		Active: r.active, Doubled: r.doubled, Fresh: r.fresh, CyclesDrove: r.cyclesDrove,
		Rate: r.rate, Best: r.best, ProbeCredit: r.probeCredit, RCut: r.rCut, Gain: r.gain, Wall: r.wallRate,
		Hi: r.hi, Below: r.below, CutAt: r.cutAt, CutSuccesses: r.cutSuccesses, Succ: r.succ, Burst: r.burst,
		FirstCutAt: r.firstCutAt, FirstCutSuccesses: r.firstCutSuccesses, NCut: r.ncut,
		EpochThrottles: r.epochThrottles, Quiet: r.quiet, CyclesUntil: r.cyclesUntil,
		Successes: l.m.successes, Throttles: l.m.throttles, SuccN: l.m.succ.n, SuccAt: l.m.succ.at,
	}
	for i, c := range r.cuts {
		w.Cuts[i] = [2]int64{c.at, c.successes}
	}
	return binary.Append(nil, binary.LittleEndian, &w)
}

// UnmarshalBinary replaces the law's state with data from MarshalBinary, keeping its configuration
// and round trip. On an error matching ErrBadLawState the law is left as it was.
func (l *RateLaw) UnmarshalBinary(data []byte) error {
	var w lawWire
	if len(data) != binary.Size(&w) {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadLawState, len(data), binary.Size(&w))
	}
	if _, err := binary.Decode(data, binary.LittleEndian, &w); err != nil {
		return fmt.Errorf("%w: %v", ErrBadLawState, err)
	}
	switch {
	case w.Format != lawFormat:
		return fmt.Errorf("%w: format %d, want %d", ErrBadLawState, w.Format, lawFormat)
	case int(w.State) >= len(rateStates), w.Active != (w.State != 0):
		return fmt.Errorf("%w: state %d (active %v)", ErrBadLawState, w.State, w.Active)
	case w.Successes < 0 || w.Throttles < 0 || w.SuccN < 0 || w.NCut < 0 || w.Succ < 0 || w.Quiet < 0:
		return fmt.Errorf("%w: a negative count", ErrBadLawState)
	}
	for _, x := range []float64{w.Rate, w.ProbeCredit, w.RCut, w.Gain, w.Wall, w.Hi, w.Below} {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("%w: a rate of %v", ErrBadLawState, x)
		}
	}
	if math.IsNaN(w.Best) || w.Best < 0 || (w.Active && !(w.Rate > 0)) {
		return fmt.Errorf("%w: rate %v, estimate %v", ErrBadLawState, w.Rate, w.Best)
	}
	r := rateStrategy{
		st: rateStates[w.State], active: w.Active, doubled: w.Doubled, fresh: w.Fresh, cyclesDrove: w.CyclesDrove,
		rate: l.r.clamp(w.Rate), best: w.Best, probeCredit: w.ProbeCredit, rCut: w.RCut, gain: w.Gain, wallRate: w.Wall,
		hi: w.Hi, below: w.Below, cutAt: w.CutAt, cutSuccesses: w.CutSuccesses, succ: w.Succ, burst: w.Burst,
		firstCutAt: w.FirstCutAt, firstCutSuccesses: w.FirstCutSuccesses, ncut: w.NCut,
		epochThrottles: w.EpochThrottles, quiet: w.Quiet, cyclesUntil: w.CyclesUntil,
		minR: l.r.minR, maxR: l.r.maxR, ceiling: l.r.ceiling,
	}
	if !w.Active {
		r.rate = 0
	}
	for i, c := range w.Cuts {
		r.cuts[i].at, r.cuts[i].successes = c[0], c[1]
	}
	l.r = r
	l.m.successes, l.m.throttles = w.Successes, w.Throttles
	l.m.succ.n, l.m.succ.at = w.SuccN, w.SuccAt
	return nil
}
