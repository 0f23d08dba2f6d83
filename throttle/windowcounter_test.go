package throttle

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// A window counter of one request per half step admits one, and then one every other window (the
// first request weighs on the next window, which has no room left): an even pace of one per step
// when the clock starts on a window boundary, as t0 and synctest's clock do. So it joins the
// Limiter conformance suite.
func init() {
	conformance = append(conformance, struct {
		name string
		new  func() (Limiter, error)
	}{"window counter", func() (Limiter, error) { return NewWindowCounter(1, step/2) }})
}

func newWindowCounter(t *testing.T, limit int, window time.Duration) *windowCounter {
	t.Helper()
	l, err := NewWindowCounter(limit, window)
	require.NoError(t, err)
	return l.(*windowCounter)
}

// aligned returns the start of the epoch-aligned window of length w that holds t.
func aligned(t time.Time, w time.Duration) time.Time {
	n := t.UnixNano()
	return time.Unix(0, n-n%int64(w)).UTC()
}

func TestWindowCounterSchedule(t *testing.T) {
	ms, s := time.Millisecond, time.Second
	third, twoThirds := 333_333_334*time.Nanosecond, 666_666_667*time.Nanosecond // rounded up
	tests := []struct {
		name   string
		limit  int
		window time.Duration
		phase  time.Duration // of the first request in its window
		arrive []time.Duration
		want   []time.Duration // when each request is due, after the first arrival
	}{
		{"the first limit go at once, then the previous window's weight decays", 3, s, 0,
			[]time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0},
			[]time.Duration{0, 0, 0, s + third, s + twoThirds, 2 * s, 2*s + s/2, 3 * s, 3*s + s/2}},
		{"a start mid-window: the next window begins sooner", 3, s, s / 2,
			[]time.Duration{0, 0, 0, 0, 0, 0},
			[]time.Duration{0, 0, 0, s/2 + third, s/2 + twoThirds, s + s/2}},
		{"a start just before a window's end", 3, s, s - ms,
			[]time.Duration{0, 0, 0, 0},
			[]time.Duration{0, 0, 0, ms + third}},
		{"spread arrivals go at once while the count allows", 4, s, 0,
			[]time.Duration{0, 300 * ms, 600 * ms, 900 * ms, 1200 * ms, 1200 * ms, 1200 * ms},
			// at 1.2s: prev 4, so one more at e with 4(1-e) <= 3-cur: e >= 1/4, 1/2, 3/4
			[]time.Duration{0, 300 * ms, 600 * ms, 900 * ms, 1250 * ms, 1500 * ms, 1750 * ms}},
		{"a late request goes at once, later ones count it in its window", 2, s, 0,
			[]time.Duration{0, 0, 5*s + 600*ms, 5*s + 600*ms, 5*s + 600*ms},
			[]time.Duration{0, 0, 5*s + 600*ms, 5*s + 600*ms, 6*s + s/2}},
		{"a limit of one is one request every other window", 1, 100 * ms, 0,
			[]time.Duration{0, 0, 0, 250 * ms},
			[]time.Duration{0, 200 * ms, 400 * ms, 600 * ms}},
		{"an idle window and its successor give the whole limit back", 2, s, 0,
			[]time.Duration{0, 0, 0, 10 * s, 10 * s, 10 * s},
			[]time.Duration{0, 0, s + s/2, 10 * s, 10 * s, 11*s + s/2}},
		{"a caller's clock stepping back a little keeps the order", 3, s, 0,
			[]time.Duration{0, s, 900 * ms, 900 * ms},
			[]time.Duration{0, s, s, 2 * s}},
		{"a limit per day", 1_000_000, 24 * time.Hour, 0,
			[]time.Duration{0, time.Hour, 23 * time.Hour},
			[]time.Duration{0, time.Hour, 23 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newWindowCounter(t, tt.limit, tt.window)
			start := aligned(t0, tt.window).Add(tt.phase)
			for i, a := range tt.arrive {
				now := start.Add(a)
				r := reserve(t, l, now)
				d := r.Delay(now)
				assert.Equal(t, tt.want[i], a+d, "request %d", i)
				if d == 0 {
					assert.Equal(t, dueReservation{}, r, "request %d: a due reservation is the shared value", i)
				}
			}
		})
	}
}

// TestWindowCounterMatchesServer feeds the due times of a backlog to testserver's sliding window
// counter with the same limit and window: every request is admitted, none could have gone a
// nanosecond sooner, and the times are exactly those of a client that retries each denial after
// the server's Retry-After (the most the server lets through). A backlog gets limit in the start's
// window and limit-1 in each window after it, so it finishes within one request's time (window/
// limit) per window of the bound N/R less the start's phase.
func TestWindowCounterMatchesServer(t *testing.T) {
	tests := []struct {
		limit  int
		window time.Duration
		phase  time.Duration
		n      int
	}{
		{200, time.Second, 0, 1000},
		{200, time.Second, 500 * time.Millisecond, 1000},
		{200, time.Second, 999 * time.Millisecond, 1000},
		{199, time.Second, 123_456_789, 2000},
		{7, 100 * time.Millisecond, 37 * time.Millisecond, 60},
		{3, 7 * time.Second, 5 * time.Second, 20},
		{2, time.Second, time.Second / 3, 20},
		{1, time.Second, 300 * time.Millisecond, 6},
		{5, 3, 1, 40}, // a window of 3ns: rounding to whole nanoseconds everywhere
		{1000, 24 * time.Hour, 17 * time.Hour, 3500},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.limit)+" per "+tt.window.String()+" from "+tt.phase.String(), func(t *testing.T) {
			l := newWindowCounter(t, tt.limit, tt.window)
			winStart := aligned(t0, tt.window)
			start := winStart.Add(tt.phase)
			due := make([]time.Time, tt.n)
			for j := range due {
				due[j] = start.Add(reserve(t, l, start).Delay(start))
			}

			alg, err := algorithm.NewSlidingWindow(algorithm.Config{Limit: int64(tt.limit), Window: tt.window})
			require.NoError(t, err)
			var st algorithm.State
			at := start
			for j, d := range due {
				// The greedy client: as soon as the previous one went, retrying after Retry-After.
				dec := alg.Decide(&st, at, 1)
				if !dec.Allowed {
					at = at.Add(dec.RetryAfter)
					dec = alg.Decide(&st, at, 1)
					require.True(t, dec.Allowed, "request %d: the server's Retry-After", j)
				}
				require.Equal(t, at, d, "request %d: due %v after the start, the server admits it at %v",
					j, d.Sub(start), at.Sub(start))
				if d.After(start) && (j == 0 || d.After(due[j-1])) {
					assert.False(t, alg.Decide(&st, d.Add(-1), 1).Allowed, "request %d could go 1ns sooner", j)
				}
				alg.Commit(&st, d, 1)
			}

			if tt.window < time.Millisecond {
				return // whole nanoseconds cost throughput in a window of a few: only the times count
			}
			// Throughput: limit in the first window, limit-1 in every later one.
			perWindow := map[int64]int{}
			for _, d := range due {
				perWindow[int64(d.Sub(winStart)/tt.window)]++
			}
			windows := int64(due[len(due)-1].Sub(winStart) / tt.window)
			for k := range windows { // the last window may be partly used
				want := max(tt.limit-1, 1)
				if k == 0 {
					want = tt.limit
				}
				if tt.limit == 1 && k%2 == 1 {
					want = 0 // one every other window
				}
				require.Equal(t, want, perWindow[k], "window %d", k)
			}
			if tt.limit > 1 {
				bound := time.Duration(float64(tt.n)/float64(tt.limit)*float64(tt.window)) - tt.phase
				elapsed := due[len(due)-1].Sub(start)
				perRequest := tt.window / time.Duration(tt.limit)
				assert.LessOrEqual(t, elapsed, bound+time.Duration(windows+1)*(perRequest+1))
				assert.GreaterOrEqual(t, elapsed, bound-perRequest-1)
			}
		})
	}
}

// TestWindowCounterHuge: limits and windows whose products exceed int64 (a million per 366 days is
// 3.2e22 request-nanoseconds) schedule exactly as testserver's 128-bit counter decides.
func TestWindowCounterHuge(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name      string
		limit     int
		window    time.Duration
		cur, prev int64 // counts put in the current and previous window
	}{
		{"largest limit, longest window, full previous window", math.MaxInt, maxQuotaWindow, 0, math.MaxInt64 - 1},
		{"largest limit, almost full current window", math.MaxInt, maxQuotaWindow, math.MaxInt64 - 2, 5},
		{"a million per 366 days", 1_000_000, maxQuotaWindow, 10, 999_999},
		{"a billion per day, nearly used", 1_000_000_000, day, 999_999_999, 3},
		{"a billion per day, the current one full", 1_000_000_000, day, 1_000_000_000, 1_000_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newWindowCounter(t, tt.limit, tt.window)
			winStart := aligned(t0, tt.window)
			start := winStart.Add(tt.window / 3)
			l.clock(start) // take the phase
			k, _ := l.windowOf(0)
			if tt.prev > 0 {
				l.counts.buf = append(l.counts.buf, windowCount{k - 1, tt.prev})
			}
			if tt.cur > 0 {
				l.counts.buf = append(l.counts.buf, windowCount{k, tt.cur})
			}
			for len(l.counts.buf) < minCountRing {
				l.counts.buf = append(l.counts.buf, windowCount{})
			}
			l.counts.size = int(min(tt.prev, 1) + min(tt.cur, 1))
			due := start.Add(reserve(t, l, start).Delay(start))

			alg, err := algorithm.NewSlidingWindow(algorithm.Config{Limit: int64(tt.limit), Window: tt.window})
			require.NoError(t, err)
			st := algorithm.State{A: winStart.UnixNano(), B: tt.cur, C: tt.prev}
			dec := alg.Decide(&st, start, 1)
			want := start.Add(dec.RetryAfter)
			assert.Equal(t, want, due, "the server admits it %v after the start, the limiter says %v",
				want.Sub(start), due.Sub(start))
			assert.True(t, alg.Decide(&st, due, 1).Allowed, "admitted at its due time")
			assert.False(t, alg.Decide(&st, due.Add(-1), 1).Allowed && due.After(start), "not a nanosecond sooner")
		})
	}
	t.Run("a burst of the largest limit over the longest window", func(t *testing.T) {
		l := newWindowCounter(t, math.MaxInt, maxQuotaWindow)
		for i := range 1000 {
			require.Zero(t, reserve(t, l, t0).Delay(t0), "request %d", i)
		}
		assert.Equal(t, 1, l.counts.size)
	})
}

func TestWindowCounterFIFO(t *testing.T) {
	l := newWindowCounter(t, 2, time.Second)
	start := aligned(t0, time.Second)
	var last time.Time
	for i := range 20 {
		now := start.Add(time.Duration(i) * 137 * time.Millisecond)
		due := now.Add(reserve(t, l, now).Delay(now))
		assert.False(t, due.Before(last), "request %d due before the one booked before it", i)
		last = due
	}
}

func TestWindowCounterCancel(t *testing.T) {
	s := time.Second
	third, twoThirds := 333_333_334*time.Nanosecond, 666_666_667*time.Nanosecond
	// Limit 3 per second from a window's start, seven requests at once:
	// due at 0, 0, 0, 1⅓s, 1⅔s, 2s, 2.5s.
	tests := []struct {
		name   string
		cancel int           // index among r0..r6
		at     time.Duration // when, after the start
		want   []time.Duration
		moved  []bool
	}{
		{"the first waiting one: those behind move up in turn", 3, s / 2,
			[]time.Duration{0, 0, 0, -1, s + third, s + twoThirds, 2 * s},
			[]bool{false, false, false, false, true, true, true}},
		{"the last one: nobody moves", 6, s / 2,
			[]time.Duration{0, 0, 0, s + third, s + twoThirds, 2 * s, -1},
			[]bool{false, false, false, false, false, false, false}},
		{"one in the next window: the next takes its place", 5, 1800 * time.Millisecond,
			[]time.Duration{0, 0, 0, s + third, s + twoThirds, -1, 2 * s},
			[]bool{false, false, false, false, false, false, true}},
		{"cancelled just before its time: the next one takes its slot", 4, 1600 * time.Millisecond,
			[]time.Duration{0, 0, 0, s + third, -1, s + twoThirds, 2 * s},
			[]bool{false, false, false, false, false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newWindowCounter(t, 3, s)
			start := aligned(t0, s)
			rs := make([]Reservation, 7)
			changed := make([]<-chan struct{}, 7)
			for i := range rs {
				rs[i] = reserve(t, l, start)
				changed[i] = rs[i].Changed()
			}
			now := start.Add(tt.at)
			rs[tt.cancel].Cancel(now)
			for i, r := range rs {
				if i == tt.cancel {
					continue
				}
				if tt.want[i] >= tt.at {
					assert.Equal(t, tt.want[i], tt.at+r.Delay(now), "reservation %d", i)
				} else {
					assert.Zero(t, r.Delay(now), "reservation %d", i)
				}
				assert.Equal(t, tt.moved[i], isClosed(changed[i]), "reservation %d Changed", i)
			}
			assert.Nil(t, changed[0], "a due reservation never moves")
			assert.Nil(t, rs[tt.cancel].Changed(), "a cancelled reservation never moves")
			assert.LessOrEqual(t, int64(l.counts.size), l.pending+2)
		})
	}
}

func TestWindowCounterCancelNoOp(t *testing.T) {
	s := time.Second
	start := aligned(t0, s)
	tests := []struct {
		name string
		run  func(r Reservation) // what happens to the waiting reservation (due at 2s)
		want time.Duration       // when the next request, booked at 2s, is due
	}{
		{"cancel twice gives back once", func(r Reservation) { r.Cancel(start); r.Cancel(start) }, 2 * s},
		{"cancel once due is a no-op", func(r Reservation) { r.Cancel(start.Add(2 * s)) }, 4 * s},
		{"cancel long after due is a no-op", func(r Reservation) { r.Cancel(start.Add(3 * s)) }, 4 * s},
		{"no cancel", func(Reservation) {}, 4 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newWindowCounter(t, 1, s)
			reserve(t, l, start)
			r := reserve(t, l, start)
			require.Equal(t, 2*s, r.Delay(start))
			tt.run(r)
			now := start.Add(2 * s)
			assert.Equal(t, tt.want, 2*s+reserve(t, l, now).Delay(now))
			assert.Nil(t, r.Changed(), "a cancelled or due reservation never moves")
		})
	}
}

func TestWindowCounterInvalid(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		window time.Duration
		want   error
	}{
		{"zero limit", 0, time.Second, ErrInvalidBurst},
		{"negative limit", -3, time.Second, ErrInvalidBurst},
		{"zero window", 10, 0, ErrInvalidRate},
		{"negative window", 10, -time.Second, ErrInvalidRate},
		{"window above 366 days", 10, 367 * 24 * time.Hour, ErrInvalidRate},
		{"largest window", 10, time.Duration(math.MaxInt64), ErrInvalidRate},
		{"366 days", 10, maxQuotaWindow, nil},
		{"one nanosecond", 1, 1, nil},
		{"largest limit", math.MaxInt, time.Second, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewWindowCounter(tt.limit, tt.window)
			if tt.want == nil {
				require.NoError(t, err)
				for range min(tt.limit, 3) {
					assert.Zero(t, reserve(t, l, t0).Delay(t0))
				}
				return
			}
			assert.Nil(t, l)
			assert.True(t, errors.Is(err, tt.want), "got %v, want %v", err, tt.want)
		})
	}
	_, err := NewWindowCounter(-3, time.Second)
	assert.ErrorContains(t, err, "-3")
	_, err = NewWindowCounter(1, -time.Second)
	assert.ErrorContains(t, err, "-1s")
}

// TestWindowCounterMemory: the limiter keeps the counts of at most the two windows around now and
// those holding waiting requests, and nothing in proportion to limit.
func TestWindowCounterMemory(t *testing.T) {
	t.Run("a limit per day allocates nothing up front", func(t *testing.T) {
		l := newWindowCounter(t, 1_000_000, 24*time.Hour)
		assert.Zero(t, cap(l.counts.buf))
	})
	t.Run("a backlog counts one entry per window it spans", func(t *testing.T) {
		l := newWindowCounter(t, 1000, time.Second)
		start := aligned(t0, time.Second)
		var last Reservation
		for range 100_000 {
			last = reserve(t, l, start)
		}
		// 1000, then 999 per window: the last of 100,000 is in window 100.
		assert.Equal(t, 100*time.Second, last.Delay(start).Truncate(time.Second))
		assert.Equal(t, 101, l.counts.size)
		later := start.Add(200 * time.Second) // all sent, all out of the window
		assert.Zero(t, reserve(t, l, later).Delay(later))
		assert.Equal(t, 1, l.counts.size)
		assert.Zero(t, l.pending)
		assert.LessOrEqual(t, len(l.counts.buf), minCountRing, "the ring shrank")
	})
	t.Run("a trickle keeps two windows", func(t *testing.T) {
		l := newWindowCounter(t, 1000, time.Second)
		for i := range 1000 {
			now := t0.Add(time.Duration(i) * 10 * time.Millisecond)
			assert.Zero(t, reserve(t, l, now).Delay(now))
			assert.LessOrEqual(t, l.counts.size, 2, "request %d", i)
		}
	})
}

// TestWindowCounterMatchesModel drives the limiter with random arrivals and cancellations and
// compares every due time with a direct search of the rule: request j (in order, cancelled ones
// left out) is due at the earliest instant at or after lower_j and slot(j-1) at which counting
// the requests before it, prev×(W−e) + (cur+1)×W <= L×W; lower_j is its arrival, or the time of a
// cancellation ahead of it while it waited. The model finds that instant by bisection on the rule
// itself (admission is monotone in time once the earlier slots are fixed), independently of the
// limiter's closed form. Moves are always earlier.
func TestWindowCounterMatchesModel(t *testing.T) {
	type req struct {
		r      Reservation
		lower  int64
		slot   int64 // the model's
		booked int64 // the limiter's, for a reservation due when booked
	}
	for _, p := range []struct {
		limit  int64
		window int64 // in ms
	}{{1, 10}, {2, 10}, {3, 100}, {5, 40}, {8, 25}} {
		for seed := range uint64(8) {
			rng := rand.New(rand.NewPCG(seed, uint64(p.limit)))
			W := p.window * int64(time.Millisecond)
			start := aligned(t0, time.Duration(W)).Add(time.Duration(rng.Int64N(W)))
			origin := start.UnixNano()
			l := newWindowCounter(t, int(p.limit), time.Duration(W))
			var reqs []*req
			// admitted reports whether a request at t (after start) fits after reqs[:j].
			admitted := func(j int, t int64) bool {
				abs := origin + t
				k := abs / W
				e := abs - k*W
				var cur, prev int64
				for _, q := range reqs[:j] {
					switch (origin + q.slot) / W {
					case k:
						cur++
					case k - 1:
						prev++
					}
				}
				return prev*(W-e)+(cur+1)*W <= p.limit*W
			}
			model := func() {
				for j, q := range reqs {
					lo := q.lower
					if j > 0 {
						lo = max(lo, reqs[j-1].slot)
					}
					hi := lo + 3*W // two windows on nothing weighs
					for lo < hi {
						mid := lo + (hi-lo)/2
						if admitted(j, mid) {
							hi = mid
						} else {
							lo = mid + 1
						}
					}
					q.slot = lo
				}
			}
			var now int64
			for step := range 150 {
				now += rng.Int64N(W / 2)
				at := start.Add(time.Duration(now))
				if len(reqs) == 0 || rng.IntN(10) < 7 {
					r := reserve(t, l, at)
					reqs = append(reqs, &req{r: r, lower: now, booked: now})
				} else {
					k := rng.IntN(len(reqs))
					before := make([]int64, len(reqs))
					for j, q := range reqs {
						before[j] = q.slot
					}
					reqs[k].r.Cancel(at)
					if reqs[k].slot > now { // waiting: given back
						for _, q := range reqs[k+1:] {
							if q.slot > now {
								q.lower = max(q.lower, now)
							}
						}
						reqs = slices.Delete(reqs, k, k+1)
						before = slices.Delete(before, k, k+1)
					}
					model()
					for j, q := range reqs {
						require.LessOrEqual(t, q.slot, before[j], "request %d moved later", j)
					}
				}
				model()
				for j, q := range reqs {
					got := q.booked
					if _, due := q.r.(dueReservation); !due {
						got = int64(q.r.Delay(start))
					}
					if got != q.slot {
						t.Fatalf("limit %d window %dms seed %d step %d: request %d due at %v, model says %v",
							p.limit, p.window, seed, step, j, time.Duration(got), time.Duration(q.slot))
					}
				}
				require.LessOrEqual(t, int64(l.counts.size), l.pending+2, "step %d", step)
			}
		}
	}
}

// TestWindowCounterConcurrent: many goroutines reserve (and sometimes cancel) at once, with clocks
// that interleave as real callers' do; testserver's sliding window counter admits every request
// kept at its due time, and every request is accounted for.
func TestWindowCounterConcurrent(t *testing.T) {
	const (
		limit      = 7
		window     = 100 * time.Millisecond
		goroutines = 16
		each       = 200
	)
	l := newWindowCounter(t, limit, window)
	var clock atomic.Int64
	type booked struct {
		r  Reservation
		at time.Time
	}
	results := make([][]booked, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				now := t0.Add(time.Duration(clock.Add(int64(time.Millisecond))))
				r, err := l.Reserve(now)
				if !assert.NoError(t, err) {
					return
				}
				if i%5 == 4 {
					r.Cancel(now)
				}
				_ = r.Changed()
				_ = r.Delay(now)
				results[g] = append(results[g], booked{r, now})
			}
		})
	}
	wg.Wait()

	l.mu.Lock()
	defer l.mu.Unlock()
	var slots []time.Time
	cancelled := 0
	for _, rs := range results {
		for _, b := range rs {
			switch r := b.r.(type) {
			case dueReservation:
				slots = append(slots, b.at)
			case *counterReservation:
				if r.cancelled {
					cancelled++
					continue
				}
				slots = append(slots, l.base.Add(time.Duration(r.slot)))
			}
		}
	}
	require.Equal(t, goroutines*each, len(slots)+cancelled)
	assert.Positive(t, cancelled)
	slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
	alg, err := algorithm.NewSlidingWindow(algorithm.Config{Limit: limit, Window: window})
	require.NoError(t, err)
	var st algorithm.State
	for i, s := range slots {
		require.True(t, alg.Decide(&st, s, 1).Allowed, "request %d at %v", i, s.Sub(t0))
		alg.Commit(&st, s, 1)
	}
	// The limit is used, not wasted: limit-1 per window after the first.
	last := slots[len(slots)-1].Sub(t0)
	assert.Less(t, last, time.Duration((len(slots)-limit)/(limit-1)+2)*window)
}

// TestWindowCounterWaiters: in virtual time (synctest's clock starts on 2000-01-01 00:00 UTC, a
// window boundary), waiters on Wait go when the counter admits them, in order of arrival, and a
// cancelled waiter's place goes to the ones behind it.
func TestWindowCounterWaiters(t *testing.T) {
	for _, cancelled := range []int{-1, 0, 3} {
		t.Run("cancel "+itoa(cancelled), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 5
				l := newWindowCounter(t, 2, time.Second)
				start := time.Now()
				require.Zero(t, start.UnixNano()%int64(time.Second), "a window boundary")
				reserve(t, l, start)
				reserve(t, l, start) // the first window is used up
				var mu sync.Mutex
				servedAt := map[int]time.Duration{}
				var wg sync.WaitGroup
				cancels := make([]context.CancelFunc, n)
				for i := range n {
					ctx, cancel := context.WithCancel(context.Background())
					cancels[i] = cancel
					wg.Go(func() {
						err := Wait(ctx, l)
						if i == cancelled {
							assert.ErrorIs(t, err, context.Canceled)
							return
						}
						if assert.NoError(t, err) {
							mu.Lock()
							servedAt[i] = time.Since(start)
							mu.Unlock()
						}
					})
					synctest.Wait() // waiter i holds its reservation before waiter i+1 asks
				}
				time.Sleep(300 * time.Millisecond)
				if cancelled >= 0 {
					cancels[cancelled]()
				}
				wg.Wait()
				for _, c := range cancels {
					c()
				}
				// Limit 2 from a full first window: half-way through the next one (the first
				// window weighs 2×½), then one per window (the one before weighs 1×1 at its start).
				slots := []time.Duration{1500 * time.Millisecond, 2 * time.Second, 3 * time.Second,
					4 * time.Second, 5 * time.Second}
				want := map[int]time.Duration{}
				k := 0
				for i := range n {
					if i != cancelled {
						want[i] = slots[k]
						k++
					}
				}
				assert.Equal(t, want, servedAt)
			})
		})
	}
}
