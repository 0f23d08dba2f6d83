package throttle

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLeakyBucketSchedule(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		rate    float64
		arrive  []time.Duration
		wantRun []time.Duration
	}{
		{"same instant spaces evenly", 10, []time.Duration{0, 0, 0, 0}, []time.Duration{0, 100 * ms, 200 * ms, 300 * ms}},
		{"no burst after idle", 10, []time.Duration{0, time.Second, time.Second}, []time.Duration{0, time.Second, 1100 * ms}},
		{"arrivals inside the interval", 10, []time.Duration{0, 10 * ms, 20 * ms, 500 * ms, 550 * ms}, []time.Duration{0, 100 * ms, 200 * ms, 500 * ms, 600 * ms}},
		{"rate 3 rounds the interval to ns", 3, []time.Duration{0, 0, 0}, []time.Duration{0, 333333333, 666666666}},
		{"1000 per second", 1000, []time.Duration{0, 0, 0}, []time.Duration{0, ms, 2 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLeakyBucket(tt.rate, 100)
			require.NoError(t, err)
			for i, a := range tt.arrive {
				now := t0.Add(a)
				r := reserve(t, l, now)
				assert.Equal(t, tt.wantRun[i], a+r.Delay(now), "request %d", i)
			}
		})
	}
}

func TestLeakyBucketBacklogFull(t *testing.T) {
	tests := []struct {
		name     string
		backlog  int
		accepted int // reservations accepted at one instant before the refusal
		wantWait time.Duration
	}{
		{"backlog 0 admits only what can go now", 0, 1, 100 * time.Millisecond},
		{"backlog 1", 1, 2, 200 * time.Millisecond},
		{"backlog 3", 3, 4, 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLeakyBucket(10, tt.backlog)
			require.NoError(t, err)
			for range tt.accepted {
				reserve(t, l, t0)
			}
			r, err := l.Reserve(t0)
			assert.Nil(t, r)
			var bf *BacklogFullError
			require.ErrorAs(t, err, &bf)
			assert.True(t, errors.Is(err, ErrBacklogFull))
			assert.Equal(t, tt.backlog, bf.Backlog)
			assert.Equal(t, tt.wantWait, bf.Wait)
			// A refusal books nothing; once the head has gone there is room again.
			later := t0.Add(100 * time.Millisecond)
			r, err = l.Reserve(later)
			require.NoError(t, err)
			assert.Equal(t, tt.wantWait-100*time.Millisecond, r.Delay(later))
		})
	}
}

func TestLeakyBucketCancelMovesUp(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		cancel int // index of the cancelled reservation among r0..r3 (r0 is due at once)
		want   []time.Duration
	}{
		{"head of the waiting line", 1, []time.Duration{0, -1, 100 * ms, 200 * ms}},
		{"middle", 2, []time.Duration{0, 100 * ms, -1, 200 * ms}},
		{"tail", 3, []time.Duration{0, 100 * ms, 200 * ms, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLeakyBucket(10, 10)
			require.NoError(t, err)
			rs := make([]Reservation, 4)
			changed := make([]<-chan struct{}, 4)
			for i := range rs {
				rs[i] = reserve(t, l, t0)
				changed[i] = rs[i].Changed()
			}
			now := t0.Add(50 * ms)
			rs[tt.cancel].Cancel(now)
			for i, r := range rs {
				if i == tt.cancel || i == 0 {
					continue
				}
				assert.Equal(t, tt.want[i], 50*ms+r.Delay(now), "reservation %d", i)
				moved := false
				select {
				case <-changed[i]:
					moved = true
				default:
				}
				assert.Equal(t, i > tt.cancel, moved, "reservation %d Changed", i)
			}
			assert.Nil(t, changed[0], "a due reservation never moves")
			// The schedule stays gapless: the next request follows the last one kept.
			assert.Equal(t, 300*ms, 50*ms+reserve(t, l, now).Delay(now))
		})
	}
}

// TestLeakyBucketFIFOWaiters starts waiters one after another and checks they go in that order,
// exactly one interval apart, and that a cancelled waiter's place goes to the ones behind it.
func TestLeakyBucketFIFOWaiters(t *testing.T) {
	for _, cancelled := range []int{-1, 0, 3, 7} {
		t.Run("cancel "+itoa(cancelled), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 8
				l, err := NewLeakyBucket(10, n)
				require.NoError(t, err)
				reserve(t, l, time.Now()) // the bucket is busy until +100ms
				start := time.Now()
				type served struct {
					who int
					at  time.Duration
				}
				var mu sync.Mutex
				var order []served
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
							order = append(order, served{i, time.Since(start)})
							mu.Unlock()
						}
					})
					synctest.Wait() // waiter i holds its reservation before waiter i+1 asks
				}
				time.Sleep(30 * time.Millisecond)
				if cancelled >= 0 {
					cancels[cancelled]()
				}
				wg.Wait()
				for _, c := range cancels {
					c()
				}
				var want []served
				k := 1
				for i := range n {
					if i != cancelled {
						want = append(want, served{i, time.Duration(k) * 100 * time.Millisecond})
						k++
					}
				}
				assert.Equal(t, want, order)
			})
		})
	}
}

func itoa(i int) string {
	if i < 0 {
		return "none"
	}
	return string(rune('0' + i))
}
