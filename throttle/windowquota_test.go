package throttle

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A window quota of one request per step is an even pace of one per step, so it joins the Limiter
// conformance suite.
func init() {
	conformance = append(conformance, struct {
		name string
		new  func() (Limiter, error)
	}{"window quota", func() (Limiter, error) { return NewWindowQuota(1, step) }})
}

func newWindowQuota(t *testing.T, limit int, window time.Duration) *windowQuota {
	t.Helper()
	l, err := NewWindowQuota(limit, window)
	require.NoError(t, err)
	return l.(*windowQuota)
}

func TestWindowQuotaSchedule(t *testing.T) {
	ms, s := time.Millisecond, time.Second
	tests := []struct {
		name   string
		limit  int
		window time.Duration
		arrive []time.Duration
		want   []time.Duration // when each request is due
	}{
		{"the first limit go at once, the next one window after the first", 3, s,
			[]time.Duration{0, 0, 0, 0, 0},
			[]time.Duration{0, 0, 0, s, s}},
		{"a burst repeats one window later per position", 3, s,
			[]time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0},
			[]time.Duration{0, 0, 0, s, s, s, 2 * s, 2 * s, 2 * s}},
		{"staggered arrivals: each waits for the one limit places before it", 3, s,
			[]time.Duration{0, 100 * ms, 500 * ms, 600 * ms, 600 * ms, 700 * ms, 700 * ms},
			[]time.Duration{0, 100 * ms, 500 * ms, s, 1100 * ms, 1500 * ms, 2 * s}},
		{"a late request goes at once, later ones count from its real slot", 2, s,
			[]time.Duration{0, 0, 5 * s, 5 * s, 5200 * ms},
			[]time.Duration{0, 0, 5 * s, 5 * s, 6 * s}},
		{"a request arriving after its earliest slot behind a waiting one", 2, s,
			[]time.Duration{0, 0, 0, 1500 * ms, 1600 * ms},
			[]time.Duration{0, 0, s, 1500 * ms, 2 * s}},
		{"exactly one window after is due, not one nanosecond later", 2, s,
			[]time.Duration{0, 0, s, s, s},
			[]time.Duration{0, 0, s, s, 2 * s}},
		{"a limit of one is an even pace", 1, 100 * ms,
			[]time.Duration{0, 0, 0, 250 * ms},
			[]time.Duration{0, 100 * ms, 200 * ms, 300 * ms}},
		{"an idle window gives the whole quota back", 2, s,
			[]time.Duration{0, 0, 0, 10 * s, 10 * s, 10 * s},
			[]time.Duration{0, 0, s, 10 * s, 10 * s, 11 * s}},
		{"a caller's clock stepping back a little keeps the order", 3, s,
			[]time.Duration{0, s, 900 * ms, 900 * ms},
			[]time.Duration{0, s, s, s}},
		{"a quota per day", 1_000_000, 24 * time.Hour,
			[]time.Duration{0, time.Hour, 23 * time.Hour},
			[]time.Duration{0, time.Hour, 23 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newWindowQuota(t, tt.limit, tt.window)
			for i, a := range tt.arrive {
				now := t0.Add(a)
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

func TestWindowQuotaCancel(t *testing.T) {
	s := time.Second
	// Limit 2 per second, six requests at t0: due at 0, 0, 1s, 1s, 2s, 2s.
	tests := []struct {
		name   string
		cancel int           // index among r0..r5
		at     time.Duration // when, after t0
		want   []time.Duration
		moved  []bool
	}{
		{"the first waiting one: its successors take its place in turn", 2, s / 2,
			[]time.Duration{0, 0, -1, s, s, 2 * s},
			[]bool{false, false, false, false, true, false}},
		{"the second waiting one", 3, s / 2,
			[]time.Duration{0, 0, s, -1, s, 2 * s},
			[]bool{false, false, false, false, true, false}},
		{"the last one: nobody moves", 5, s / 2,
			[]time.Duration{0, 0, s, s, 2 * s, -1},
			[]bool{false, false, false, false, false, false}},
		{"one due in the next window, cancelled just before it", 4, 1500 * time.Millisecond,
			[]time.Duration{0, 0, s, s, -1, 2 * s},
			[]bool{false, false, false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newWindowQuota(t, 2, s)
			rs := make([]Reservation, 6)
			changed := make([]<-chan struct{}, 6)
			for i := range rs {
				rs[i] = reserve(t, l, t0)
				changed[i] = rs[i].Changed()
			}
			now := t0.Add(tt.at)
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
				moved := false
				if changed[i] != nil {
					select {
					case <-changed[i]:
						moved = true
					default:
					}
				}
				assert.Equal(t, tt.moved[i], moved, "reservation %d Changed", i)
			}
			assert.Nil(t, changed[0], "a due reservation never moves")
			runs, slots := l.size()
			assert.LessOrEqual(t, runs, 3)
			assert.LessOrEqual(t, slots, int64(2+l.pending), "at most limit due slots plus the pending ones")
		})
	}
}

// TestWindowQuotaCancelLate: a cancellation reschedules the requests behind from the time of the
// cancellation, never before it.
func TestWindowQuotaCancelLate(t *testing.T) {
	s := time.Second
	l := newWindowQuota(t, 1, s)
	reserve(t, l, t0)       // 0
	r1 := reserve(t, l, t0) // 1s
	r2 := reserve(t, l, t0) // 2s
	r3 := reserve(t, l, t0) // 3s
	now := t0.Add(900 * time.Millisecond)
	c2, c3 := r2.Changed(), r3.Changed()
	r1.Cancel(now)
	assert.Equal(t, s, 900*time.Millisecond+r2.Delay(now), "r2 takes r1's slot")
	assert.Equal(t, 2*s, 900*time.Millisecond+r3.Delay(now))
	assert.True(t, isClosed(c2))
	assert.True(t, isClosed(c3))

	// Cancelled at 2.5s, when the slot before it is long past: the one behind goes at once.
	l = newWindowQuota(t, 1, s)
	reserve(t, l, t0)       // 0
	reserve(t, l, t0)       // 1s
	r2 = reserve(t, l, t0)  // 2s
	r3 = reserve(t, l, t0)  // 3s
	r4 := reserve(t, l, t0) // 4s
	now = t0.Add(2500 * time.Millisecond)
	// r2 is due at 2.5s already: cancelling it is a no-op.
	r2.Cancel(now)
	assert.Equal(t, 3*s, 2500*time.Millisecond+r3.Delay(now))
	r3.Cancel(now)
	assert.Equal(t, 3*s, 2500*time.Millisecond+r4.Delay(now), "r4 one window after r2, which was sent")
	assert.Equal(t, 4*s, 2500*time.Millisecond+reserve(t, l, now).Delay(now))
}

func isClosed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestWindowQuotaCancelNoOp(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		run  func(r Reservation) // what happens to the waiting reservation (due at 1s)
		want time.Duration       // when the next request, booked at 1s, is due
	}{
		{"cancel twice gives back once", func(r Reservation) { r.Cancel(t0); r.Cancel(t0) }, s},
		{"cancel once due is a no-op", func(r Reservation) { r.Cancel(t0.Add(s)) }, 2 * s},
		{"cancel long after due is a no-op", func(r Reservation) { r.Cancel(t0.Add(s + s/2)) }, 2 * s},
		{"no cancel", func(Reservation) {}, 2 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newWindowQuota(t, 1, s)
			reserve(t, l, t0)
			r := reserve(t, l, t0)
			tt.run(r)
			now := t0.Add(s)
			assert.Equal(t, tt.want, s+reserve(t, l, now).Delay(now))
			assert.Nil(t, r.Changed(), "a cancelled or due reservation never moves")
		})
	}
}

func TestWindowQuotaInvalid(t *testing.T) {
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
		{"largest window", 10, time.Duration(1<<63 - 1), ErrInvalidRate},
		{"366 days", 10, 366 * 24 * time.Hour, nil},
		{"one nanosecond", 1, 1, nil},
		{"huge limit", 1<<62 + 1, time.Second, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewWindowQuota(tt.limit, tt.window)
			if tt.want == nil {
				require.NoError(t, err)
				now := t0
				for range min(tt.limit, 3) {
					assert.Zero(t, reserve(t, l, now).Delay(now))
				}
				if tt.limit == 1 {
					assert.Equal(t, tt.window, reserve(t, l, now).Delay(now))
				}
				return
			}
			assert.Nil(t, l)
			assert.True(t, errors.Is(err, tt.want), "got %v, want %v", err, tt.want)
		})
	}
	_, err := NewWindowQuota(-3, time.Second)
	assert.ErrorContains(t, err, "-3")
	_, err = NewWindowQuota(1, -time.Second)
	assert.ErrorContains(t, err, "-1s")
}

// TestWindowQuotaMemory: the limiter keeps runs of equal slots, never more than limit due slots
// plus the pending ones, and nothing in proportion to limit up front.
func TestWindowQuotaMemory(t *testing.T) {
	t.Run("a quota per day allocates nothing up front", func(t *testing.T) {
		l := newWindowQuota(t, 1_000_000, 24*time.Hour)
		assert.Zero(t, cap(l.runs.buf))
	})
	t.Run("a burst within the quota is one run", func(t *testing.T) {
		l := newWindowQuota(t, 1_000_000, 24*time.Hour)
		for range 100_000 {
			reserve(t, l, t0)
		}
		runs, slots := l.size()
		assert.Equal(t, 1, runs)
		assert.Equal(t, int64(100_000), slots)
		assert.LessOrEqual(t, cap(l.runs.buf), minRunRing)
	})
	t.Run("a burst beyond the quota is one run per window", func(t *testing.T) {
		l := newWindowQuota(t, 1000, time.Second)
		var last Reservation
		for range 100_000 {
			last = reserve(t, l, t0)
		}
		assert.Equal(t, 99*time.Second, last.Delay(t0))
		runs, slots := l.size()
		assert.Equal(t, 100, runs)
		assert.Equal(t, int64(100_000), slots, "limit due plus 99,000 pending")
		later := t0.Add(200 * time.Second) // all sent, all out of the window
		assert.Zero(t, reserve(t, l, later).Delay(later))
		runs, slots = l.size()
		assert.Equal(t, 1, runs)
		assert.Equal(t, int64(1), slots)
		assert.LessOrEqual(t, cap(l.runs.buf), minRunRing, "the ring shrank")
	})
	t.Run("a trickle keeps only the last window", func(t *testing.T) {
		l := newWindowQuota(t, 1000, time.Second)
		for i := range 1000 { // one every 10ms for 10s: 100 in any window
			now := t0.Add(time.Duration(i) * 10 * time.Millisecond)
			assert.Zero(t, reserve(t, l, now).Delay(now))
			runs, slots := l.size()
			assert.LessOrEqual(t, runs, 100, "request %d", i)
			assert.LessOrEqual(t, slots, int64(100), "request %d", i)
		}
	})
	t.Run("a cancelled request leaves no run behind", func(t *testing.T) {
		l := newWindowQuota(t, 2, time.Second)
		reserve(t, l, t0)
		reserve(t, l, t0)
		r := reserve(t, l, t0) // due at 1s, alone in its run
		r.Cancel(t0.Add(time.Second / 2))
		runs, slots := l.size()
		assert.Equal(t, 1, runs)
		assert.Equal(t, int64(2), slots)
		later := t0.Add(1500 * time.Millisecond)
		assert.Zero(t, reserve(t, l, later).Delay(later))
		runs, slots = l.size()
		assert.Equal(t, 1, runs, "only the new request's run")
		assert.Equal(t, int64(1), slots)
	})
	t.Run("many distinct slots keep at most limit due", func(t *testing.T) {
		l := newWindowQuota(t, 5, time.Hour)
		for i := range 50 {
			now := t0.Add(time.Duration(i) * time.Millisecond)
			reserve(t, l, now)
		}
		runs, slots := l.size()
		assert.Equal(t, int64(5)+l.pending, slots)
		assert.Equal(t, runs, int(slots), "distinct slots, one run each")
	})
}

// TestWindowQuotaMatchesModel drives the limiter with random arrivals and cancellations and
// compares every slot with a direct computation of the rule: request j (in order, cancelled ones
// left out) is due at max(lower_j, slot(j-1), slot(j-limit)+window), where lower_j is its arrival,
// or the time of a cancellation ahead of it while it waited. It also checks the guarantee itself:
// never more than limit due in any window.
func TestWindowQuotaMatchesModel(t *testing.T) {
	type req struct {
		r      Reservation
		lower  int64
		slot   int64 // the model's
		booked int64 // the limiter's, for a reservation due when booked
	}
	for _, p := range []struct {
		limit  int
		window int64 // in ms
	}{{1, 10}, {2, 10}, {3, 100}, {5, 40}, {8, 25}} {
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, uint64(p.limit)))
			W := p.window * int64(time.Millisecond)
			l := newWindowQuota(t, p.limit, time.Duration(p.window)*time.Millisecond)
			var reqs []*req
			model := func() {
				for j, q := range reqs {
					s := q.lower
					if j > 0 {
						s = max(s, reqs[j-1].slot)
					}
					if j >= p.limit {
						s = max(s, reqs[j-p.limit].slot+W)
					}
					q.slot = s
				}
			}
			var now int64
			for step := range 300 {
				now += rng.Int64N(W / 2)
				at := t0.Add(time.Duration(now))
				if len(reqs) == 0 || rng.IntN(10) < 7 {
					r := reserve(t, l, at)
					reqs = append(reqs, &req{r: r, lower: now, booked: now})
				} else {
					k := rng.IntN(len(reqs))
					reqs[k].r.Cancel(at)
					if reqs[k].slot > now { // pending: given back
						for _, q := range reqs[k+1:] {
							if q.slot > now {
								q.lower = max(q.lower, now)
							}
						}
						reqs = slices.Delete(reqs, k, k+1)
					}
				}
				model()
				for j, q := range reqs {
					got := q.booked
					if _, due := q.r.(dueReservation); !due {
						got = int64(q.r.Delay(t0))
					}
					if got != q.slot {
						t.Fatalf("limit %d window %dms seed %d step %d: request %d due at %v, model says %v",
							p.limit, p.window, seed, step, j, time.Duration(got), time.Duration(q.slot))
					}
				}
			}
			for j := p.limit; j < len(reqs); j++ {
				require.GreaterOrEqual(t, reqs[j].slot-reqs[j-p.limit].slot, W, "more than limit in a window")
			}
		}
	}
}

// TestWindowQuotaConcurrent: many goroutines reserve (and sometimes cancel) at once, with clocks
// that interleave as real callers' do; the slots of the requests kept never put more than limit in
// any window, and every request is accounted for.
func TestWindowQuotaConcurrent(t *testing.T) {
	const (
		limit      = 7
		window     = 100 * time.Millisecond
		goroutines = 16
		each       = 200
	)
	l := newWindowQuota(t, limit, window)
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
			case *windowReservation:
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
	assert.Equal(t, int64(len(slots)), l.next, "every request kept has a sequence number")
	slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
	for i := limit; i < len(slots); i++ {
		require.GreaterOrEqual(t, slots[i].Sub(slots[i-limit]), window, "requests %d and %d", i-limit, i)
	}
	// The quota is used, not wasted: the last slot is where a full quota per window puts it.
	last := slots[len(slots)-1].Sub(slots[0])
	assert.Less(t, last, time.Duration(len(slots)/limit+1)*window)
}

// TestWindowQuotaWaiters: waiters on Wait go in windows of limit, in order of arrival, and a
// cancelled waiter's place goes to the ones behind it.
func TestWindowQuotaWaiters(t *testing.T) {
	for _, cancelled := range []int{-1, 0, 5} {
		t.Run("cancel "+itoa(cancelled), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 9
				l := newWindowQuota(t, 3, time.Second)
				for range 3 {
					reserve(t, l, time.Now()) // the first window is used up
				}
				start := time.Now()
				var mu sync.Mutex
				servedAt := map[int]time.Duration{} // waiters that wake together may record in any order
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
				want := map[int]time.Duration{}
				k := 0
				for i := range n {
					if i != cancelled {
						want[i] = time.Duration(1+k/3) * time.Second
						k++
					}
				}
				assert.Equal(t, want, servedAt)
			})
		})
	}
}
