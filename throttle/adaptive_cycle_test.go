package throttle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the window cycles (adaptive_cycle.go) in explicit time: responses are fed in by hand,
// with the send time of each request.

const cms = int64(time.Millisecond) // a millisecond on the integer clock

// cycleRun feeds responses to a windowCycles, in milliseconds, with nothing in flight.
type cycleRun struct {
	t    *testing.T
	w    windowCycles
	last cycleDecision
}

func none(int64) int64 { return 0 }

// ceilMs is t in whole milliseconds, rounded up.
func ceilMs(t int64) int64 { return (t + cms - 1) / cms }

// ok feeds a success for a request sent at sentMs, observed 1 ms later.
func (r *cycleRun) ok(sentMs int64) cycleDecision {
	r.last = r.w.observe((sentMs+1)*cms, sentMs*cms, false, false, none)
	return r.last
}

// no feeds a throttle (without Retry-After) for a request sent at sentMs, observed 1 ms later.
func (r *cycleRun) no(sentMs int64) cycleDecision {
	r.last = r.w.observe((sentMs+1)*cms, sentMs*cms, true, false, none)
	return r.last
}

// send notes n requests sent at sentMs.
func (r *cycleRun) send(sentMs int64, n int) {
	for range n {
		r.w.noted(sentMs * cms)
	}
}

// burst feeds the successes of the 199 requests a cycle that began at beginMs lets go at once.
func (r *cycleRun) burst(beginMs int64) {
	for i := range int64(199) {
		r.ok(beginMs + i/16)
	}
}

// nextCycle feeds the success of the first request after the hold, which begins a cycle, notes
// the 199 requests that cycle lets go, and returns when it began.
func (r *cycleRun) nextCycle() (beginMs int64) {
	beginMs = ceilMs(r.w.hold)
	r.ok(beginMs)
	r.send(beginMs, 199)
	return beginMs
}

// untilProbing runs the cycles from the one that began at beginMs on until one probes its tail,
// feeds that cycle's burst, and returns when it began.
func (r *cycleRun) untilProbing(beginMs int64) int64 {
	for range 8 {
		probing := r.w.probing()
		r.burst(beginMs)
		if probing {
			return beginMs
		}
		beginMs = r.nextCycle()
	}
	r.t.Fatal("no cycle probed its tail")
	return 0
}

// burstThenWall feeds what a window of quota per second shows a client that starts unpaced at 0:
// quota successes sent over the first 13 ms, throttles at 14 ms and across the wall (sent at
// wallNos), and the success that ends the wall, sent at endMs.
func (r *cycleRun) burstThenWall(quota int, wallNos []int64, endMs int64) cycleDecision {
	for i := range quota {
		r.ok(int64(i) * 13 / int64(quota))
	}
	r.no(14)
	for _, at := range wallNos {
		r.no(at)
	}
	return r.ok(endMs)
}

func TestWindowCyclesGuessFromBurstThenWall(t *testing.T) {
	r := &cycleRun{t: t}
	d := r.burstThenWall(200, []int64{100, 300, 600, 900}, 1001)
	quota, period := r.w.learned()
	assert.Equal(t, int64(200), quota)
	assert.Equal(t, 1001*time.Millisecond, period)
	require.True(t, d.act)
	// Probation: the allowance grows with the successes of the cycle, from one.
	assert.Equal(t, int64(1), d.grant)
	// The hold ends halfway between the last throttle (900 ms after the burst) and the success
	// that ended the wall (1001 ms).
	assert.Equal(t, (1001+950)*cms+cms/2, d.hold)
	d = r.ok(1002)
	assert.Equal(t, int64(2), d.grant, "one more per success while on probation")
}

func TestWindowCyclesNoGuess(t *testing.T) {
	tests := []struct {
		name string
		feed func(r *cycleRun)
	}{
		{"a token bucket: one success per interval after the burst", func(r *cycleRun) {
			for i := range int64(10) {
				r.ok(i / 10)
			}
			for i := int64(1); i < 400; i++ {
				r.no(i*5 - 1)
				r.ok(i * 5)
			}
		}},
		{"a silence is no wall: the client stopped asking", func(r *cycleRun) {
			r.burstThenWall(200, nil, 1001)
		}},
		{"a burst too small", func(r *cycleRun) {
			r.burstThenWall(3, []int64{300, 600, 900}, 1001)
		}},
		{"a wall too short", func(r *cycleRun) {
			r.burstThenWall(200, []int64{40, 60, 80}, 90)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &cycleRun{t: t}
			tt.feed(r)
			quota, _ := r.w.learned()
			assert.Zero(t, quota)
			assert.False(t, r.w.guessing())
		})
	}
}

func TestWindowCyclesRefuted(t *testing.T) {
	tests := []struct {
		name    string
		refute  func(r *cycleRun) cycleDecision
		dropped bool
	}{
		{"a first cycle that is throttled early (a window counter)", func(r *cycleRun) cycleDecision {
			r.ok(1002)
			return r.no(1003)
		}, false},
		{"rate-limit headers", func(r *cycleRun) cycleDecision {
			return r.w.headers()
		}, false},
		{"a Retry-After", func(r *cycleRun) cycleDecision {
			return r.w.observe(1010*cms, 1009*cms, true, true, none)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &cycleRun{t: t}
			r.burstThenWall(200, []int64{100, 300, 600, 900}, 1001)
			require.True(t, r.w.guessing())
			d := tt.refute(r)
			assert.True(t, d.act, "the hold and the allowance are cleared")
			assert.Zero(t, d.grant)
			assert.Zero(t, d.hold)
			assert.Equal(t, tt.dropped, d.dropped > 0)
			assert.False(t, r.w.guessing())
			assert.Equal(t, cycleDecision{}, r.ok(5000), "refuted for good")
		})
	}
}

// confirmed returns a run whose guess (200 per second) was confirmed by its first cycle, which
// began at 1001 ms: the first request after that cycle's hold found the quota not back, and the
// next one, sent at 1999 ms, found it back, which began a cycle; its hold is returned too.
func confirmed(t *testing.T) (*cycleRun, int64) {
	r := &cycleRun{t: t}
	r.burstThenWall(200, []int64{100, 300, 600, 900}, 1001)
	r.send(1001, 199)
	r.burst(1002)
	hold := r.w.hold
	d := r.no(ceilMs(hold))
	require.True(t, d.act)
	assert.Greater(t, d.hold, hold, "the hold moves to the next halfway point")
	d = r.ok(1999)
	require.True(t, d.act)
	assert.Equal(t, cycleConfirmed, r.w.mode)
	assert.Equal(t, int64(199), d.grant, "a confirmed cycle lets the rest of the quota go at once")
	r.send(1999, 199)
	return r, d.hold
}

func TestWindowCyclesSearchNarrowsThePeriod(t *testing.T) {
	r, hold := confirmed(t)
	quota, period := r.w.learned()
	assert.Equal(t, int64(200), quota)
	assert.Equal(t, 998*time.Millisecond, period, "a success proves the period")
	assert.GreaterOrEqual(t, hold, 1999*cms+998*cms, "the hold never ends before the proved period")
	// The bounds are 951 ms (a throttle) and 998 ms (a success): the next hold ends halfway,
	// after a listening gap of 5% of the period before every fourth cycle.
	want := 1999*cms + (951*cms+998*cms)/2
	if r.w.listenNext {
		want += int64(float64(998*cms) * cycleListen)
	}
	assert.Equal(t, want, hold)
}

func TestWindowCyclesContended(t *testing.T) {
	// After a listening gap, the burst draws a throttle: others took quota meanwhile.
	r, _ := confirmed(t)
	var d cycleDecision
	begin := int64(1999)
	for range 8 {
		r.burst(begin)
		if r.w.listening {
			r.no(begin + 20)
		}
		begin = ceilMs(r.w.hold)
		if d = r.ok(begin); d.dropped > 0 {
			break
		}
		r.send(begin, 199)
	}
	assert.InDelta(t, 200.0, d.dropped, 2, "the law takes over from the quota per period")
	assert.False(t, r.w.guessing())
}

func TestWindowCyclesTailProbeGrowsTheQuota(t *testing.T) {
	r, _ := confirmed(t)
	// Run cycles until one probes its tail; the server admits 220.
	begin := r.untilProbing(1999)
	for n := 0; n < 20; n++ {
		r.send(begin+20+int64(n), 1)
		d := r.ok(begin + 20 + int64(n))
		if n < 19 {
			require.Equal(t, int64(1), d.grant, "probe on, one at a time")
		}
	}
	r.send(begin+45, 1)
	r.no(begin + 45)
	quota, _ := r.w.learned()
	assert.Equal(t, int64(220), quota)
}

func TestWindowCyclesIdleIsNoWall(t *testing.T) {
	// A cycle's burst ends in a throttle, then the callers go idle for a minute: the success after
	// that ends no wall, and the period stands.
	r, _ := confirmed(t)
	r.burst(1999)
	r.no(2020)
	_, before := r.w.learned()
	d := r.ok(62000)
	require.True(t, d.act, "the quota is back: a cycle begins")
	_, after := r.w.learned()
	assert.Equal(t, before, after)
	assert.Less(t, d.hold-62000*cms, 2*int64(time.Second), "the next hold is a period away, not a minute")
}

func TestWindowCyclesTailGrowthUndone(t *testing.T) {
	// A tail probe that a delay let through makes the quota 201; the next cycle's burst draws a
	// throttle: the quota goes back to 200, and the guess stands.
	r, _ := confirmed(t)
	begin := r.untilProbing(1999)
	r.send(begin+20, 1)
	r.ok(begin + 20)
	r.send(begin+21, 1)
	r.no(begin + 21)
	quota, _ := r.w.learned()
	require.Equal(t, int64(201), quota)
	// The next cycle: 200 admitted, one of its 201 throttled (mid-burst).
	begin = r.nextCycle()
	r.send(begin, 1)
	for i := range int64(100) {
		r.ok(begin + i/16)
	}
	r.no(begin + 6)
	for i := range int64(99) {
		r.ok(begin + 7 + i/16)
	}
	r.nextCycle()
	quota, _ = r.w.learned()
	assert.Equal(t, int64(200), quota)
	assert.True(t, r.w.guessing(), "not refuted")
	assert.Zero(t, r.w.strikes, "the throttle is the growth's, not another client's")
}

func TestWindowCyclesRespectTheMaximumRate(t *testing.T) {
	// 200 per second is above a maximum of 50/s: no guess.
	r := &cycleRun{t: t, w: windowCycles{maxRate: 50}}
	r.burstThenWall(200, []int64{100, 300, 600, 900}, 1001)
	assert.False(t, r.w.guessing())
}

func TestWindowCyclesProbationIgnoresTheWallsThrottles(t *testing.T) {
	// A throttle for a request sent in the wall, observed after the success that ended it, does
	// not refute the first cycle.
	r := &cycleRun{t: t}
	r.burstThenWall(200, []int64{100, 300, 600, 900}, 1001)
	r.no(950)
	assert.True(t, r.w.guessing())
}

func TestWindowCyclesSlowBucketRefuted(t *testing.T) {
	// A bucket of 10 that refills one token every 150 ms, hammered by its callers: 10 at once,
	// then a wall of throttles until the next token. It is guessed as 10 per 150 ms, and the
	// first cycle, which finds one token and then throttles, refutes it.
	r := &cycleRun{t: t}
	for i := range int64(10) {
		r.ok(i / 10)
	}
	for at := int64(2); at < 150; at += 10 {
		r.no(at)
	}
	r.ok(151)
	require.True(t, r.w.guessing())
	d := r.no(152)
	assert.True(t, d.act)
	assert.False(t, r.w.guessing())
}
