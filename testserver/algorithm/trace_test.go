package algorithm

import (
	"math"
	"math/rand/v2"
	"time"
)

// t0 is 2026-01-01T00:00:00Z, a multiple of every window length the hand-written tables use, so
// that offsets from it are offsets into epoch-aligned windows.
var t0 = time.Unix(1_767_225_600, 0)

// t0ns is t0 in Unix nanoseconds.
var t0ns = t0.UnixNano()

// ts returns the instant ns Unix nanoseconds.
func ts(ns int64) time.Time { return time.Unix(0, ns) }

// op is one request of a trace: n requests at Unix nanosecond t.
type op struct{ t, n int64 }

// mustNew returns New(name, c) or fails the test run.
func mustNew(name string, c Config) Algorithm {
	a, err := New(name, c)
	if err != nil {
		panic(err)
	}
	return a
}

// randomConfig returns parameters for the algorithm called name: mostly small quotas over windows
// that do and do not divide evenly, sometimes quotas and windows whose products overflow int64.
func randomConfig(r *rand.Rand, name string) Config {
	windows := []time.Duration{time.Second, 3 * time.Second, 7 * time.Millisecond, time.Hour,
		333 * time.Nanosecond, 24 * time.Hour, 1e17, 1e18}
	c := Config{Window: windows[r.IntN(len(windows))]}
	// Limits go up to math.MaxInt64/2, bursts up to 3*30.
	switch k := r.IntN(20); {
	case k < 15:
		c.Limit = 1 + r.Int64N(20)
	case k < 17:
		c.Limit = 1_000_000 + r.Int64N(1000)
	case k < 19:
		c.Limit = 1e12 + r.Int64N(1e6)
	default:
		c.Limit = math.MaxInt64 / (2 + r.Int64N(5))
	}
	if name == NameTokenBucket || name == NameLeakyBucket {
		switch r.IntN(3) {
		case 0: // burst = limit (zero means limit)
		case 1:
			c.Burst = 1 + r.Int64N(min(c.Limit, 30))
		case 2:
			c.Burst = 1 + r.Int64N(3*min(c.Limit, 30))
		}
	}
	return c
}

// maxTraceTime bounds trace times (the year 2128), far enough below math.MaxInt64 that every retry
// instant is representable: the algorithms' clock ends in 2262.
const maxTraceTime = 5e18

// randomTrace returns steps requests for a, starting at start: bursts at one instant, gaps around the emission
// interval Window/Limit and around the window, steps of one nanosecond, whole-window jumps, and
// request sizes of 1, a few, exactly the burst, above the burst, and below 1. With late, about one
// step in twenty goes back in time (a caller that read the clock before an earlier one committed).
func randomTrace(r *rand.Rand, a Algorithm, start int64, steps int, late bool) []op {
	w := int64(a.Window())
	iv := max(1, w/a.Limit())
	burst := a.Burst()
	trace := make([]op, 0, steps)
	t, latest := start, start
	for range steps {
		var dt int64
		switch k := r.IntN(100); {
		case k < 25:
			dt = 0
		case k < 55:
			dt = r.Int64N(min(2*iv, 1e17) + 1)
		case k < 70:
			dt = min(iv, 1e17) * (1 + r.Int64N(3))
		case k < 80:
			dt = r.Int64N(min(w, 1e17) + 1)
		case k < 85:
			dt = min(w, 2e18) * (1 + r.Int64N(2))
		default:
			dt = 1
		}
		if t > maxTraceTime-dt {
			dt = 1
		}
		t += dt
		latest = max(latest, t)
		when := latest
		if late && r.IntN(20) == 0 {
			when = latest - r.Int64N(min(2*iv, 1e12)+1)
		}
		var n int64
		switch k := r.IntN(100); {
		case k < 70:
			n = 1
		case k < 80:
			n = 1 + r.Int64N(min(burst, 64))
		case k < 85:
			n = min(burst, 1000)
		case k < 90:
			n = burst + 1 // never admitted; burst < math.MaxInt64 since Limit is at most MaxInt64/2 here
		case k < 95:
			n = -r.Int64N(3) // 0, -1, -2: charged as 1
		default:
			n = 2
		}
		trace = append(trace, op{when, n})
	}
	return trace
}
