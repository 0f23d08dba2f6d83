package algorithm

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"
	"time"
)

// checkArbitrary runs every method of a on s at now with n and fails if anything panics, if Decide or
// Idle change s, or if a Decision is malformed. States here may be anything at all: written by another
// algorithm (a rule whose algorithm changed on reload) or corrupted.
func checkArbitrary(t testing.TB, a Algorithm, s State, now time.Time, n int64) {
	t.Helper()
	before := s.Clone()
	d := a.Decide(&s, now, n)
	a.Idle(&s, now)
	if !reflect.DeepEqual(before, s) {
		t.Fatalf("%s: Decide or Idle changed %+v to %+v", a.Name(), before, s)
	}
	if d.Remaining < 0 || d.ResetAfter < 0 || d.RetryAfter < 0 || d.Delay < 0 || (d.Allowed && (d.RetryAfter != 0)) ||
		(!d.Allowed && d.Delay != 0) || d.Limit != a.Limit() {
		t.Fatalf("%s on %+v at %v, n=%d: malformed %+v", a.Name(), before, now, n, d)
	}
	a.Commit(&s, now, n)
	a.Decide(&s, now, n)
	a.Idle(&s, now)
	a.Commit(&s, now.Add(time.Duration(a.Window())), 1)
}

// TestArbitraryStates feeds every algorithm States full of extreme and random values.
func TestArbitraryStates(t *testing.T) {
	r := seed("arbitrary", 0)
	registers := []int64{0, 1, -1, 2, math.MinInt64, math.MaxInt64, t0ns, t0ns + 1e9, 1e18}
	reg := func() int64 {
		if r.IntN(3) == 0 {
			return r.Int64() - r.Int64()
		}
		return registers[r.IntN(len(registers))]
	}
	nows := []time.Time{{}, t0, ts(0), ts(-5), ts(math.MaxInt64), time.Unix(1<<40, 0), t0.Add(time.Hour)}
	configs := []Config{
		{Limit: 1, Window: 1},
		{Limit: 10, Window: time.Second},
		{Limit: 3, Window: 4e18},
		{Limit: math.MaxInt64, Window: math.MaxInt64},
		{Limit: 1, Window: math.MaxInt64},
		{Limit: math.MaxInt64, Window: 1},
	}
	ns := []int64{math.MinInt64, 0, 1, 5, math.MaxInt64}
	for range 20000 {
		name := Names()[r.IntN(len(Names()))]
		a := mustNew(name, configs[r.IntN(len(configs))])
		s := State{A: reg(), B: reg(), C: reg(), Head: int(reg())}
		if r.IntN(2) == 0 {
			s.Log = make([]int64, r.IntN(10))
			for i := range s.Log {
				s.Log[i] = reg()
			}
		}
		checkArbitrary(t, a, s, nows[r.IntN(len(nows))], ns[r.IntN(len(ns))])
	}
}

// FuzzArbitraryState is TestArbitraryStates for the fuzzer: go test -fuzz FuzzArbitraryState.
func FuzzArbitraryState(f *testing.F) {
	f.Add(uint8(0), int64(10), int64(time.Second), int64(0), int64(0), int64(0), int64(0), 0, []byte{}, t0ns, int64(1))
	f.Add(uint8(3), int64(3), int64(time.Minute), int64(0), int64(-1), int64(5), int64(math.MaxInt64), -3,
		[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add(uint8(4), int64(math.MaxInt64), int64(math.MaxInt64), int64(0), int64(math.MinInt64), int64(math.MaxInt64),
		int64(math.MinInt64), 7, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, int64(-1), int64(0))
	f.Add(uint8(1), int64(1), int64(1), int64(math.MaxInt64), t0ns, int64(1), int64(1), 0, []byte{}, t0ns-1, int64(2))
	f.Fuzz(func(t *testing.T, alg uint8, limit, window, burst, a, b, c int64, head int, log []byte, now, n int64) {
		names := Names()
		name := names[int(alg)%len(names)]
		if name != NameTokenBucket && name != NameLeakyBucket {
			burst = 0
		}
		algo, err := New(name, Config{Limit: limit, Window: time.Duration(window), Burst: burst})
		if err != nil {
			return
		}
		s := State{A: a, B: b, C: c, Head: head}
		for len(log) >= 8 {
			s.Log = append(s.Log, int64(binary.LittleEndian.Uint64(log)))
			log = log[8:]
		}
		checkArbitrary(t, algo, s, ts(now), n)
	})
}
