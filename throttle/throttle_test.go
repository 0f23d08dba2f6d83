package throttle

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newThrottle(t *testing.T, opts ...Option) *Throttle {
	t.Helper()
	th, err := New(opts...)
	require.NoError(t, err)
	return th
}

func leaky(rate float64, backlog int) Option {
	return WithLimiter(func(string) (Limiter, error) { return NewLeakyBucket(rate, backlog) })
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want error
	}{
		{"defaults", nil, nil},
		{"nil option ignored", []Option{nil}, nil},
		{"nil key func", []Option{WithKeyFunc(nil)}, ErrInvalidOption},
		{"zero max keys", []Option{WithMaxKeys(0)}, ErrInvalidOption},
		{"negative max keys", []Option{WithMaxKeys(-1)}, ErrInvalidOption},
		{"nil factory means no pace", []Option{WithLimiter(nil)}, nil},
		{"everything", []Option{WithMaxKeys(3), WithKeyFunc(func(r *http.Request) string { return r.Header.Get("Authorization") }), leaky(1, 1)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th, err := New(tt.opts...)
			if tt.want != nil {
				assert.Nil(t, th)
				assert.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 0, th.Len())
		})
	}
}

// waitAll starts one Wait per key (in order, each blocked before the next starts) and returns
// when each returned, relative to start, and its error.
func waitAll(t *testing.T, th *Throttle, ctx context.Context, keys ...string) ([]time.Duration, []error) {
	t.Helper()
	start := time.Now()
	at := make([]time.Duration, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() {
			errs[i] = th.Wait(ctx, k)
			at[i] = time.Since(start)
		})
		synctest.Wait()
	}
	wg.Wait()
	return at, errs
}

func TestPauseHoldsBackOnlyItsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t)
		th.Pause("a", time.Now().Add(2*time.Second))
		at, errs := waitAll(t, th, context.Background(), "a", "b", "a")
		assert.Equal(t, []error{nil, nil, nil}, errs)
		assert.Equal(t, []time.Duration{2 * time.Second, 0, 2 * time.Second}, at)
		assert.True(t, th.PausedUntil("a").IsZero(), "the pause is over")
	})
}

func TestPauseExtendsNeverShortens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t)
		start := time.Now()
		th.Pause("a", start.Add(2*time.Second))
		th.Pause("a", start.Add(time.Second))
		assert.Equal(t, start.Add(2*time.Second), th.PausedUntil("a"))
		th.Pause("a", start.Add(-time.Second))
		assert.Equal(t, start.Add(2*time.Second), th.PausedUntil("a"))
		assert.True(t, th.PausedUntil("b").IsZero())

		done := make(chan time.Duration)
		go func() {
			assert.NoError(t, th.Wait(context.Background(), "a"))
			done <- time.Since(start)
		}()
		synctest.Wait()
		time.Sleep(time.Second)
		th.Pause("a", start.Add(3*time.Second)) // extended while a request waits out the pause
		assert.Equal(t, 3*time.Second, <-done)
	})
}

// TestPauseWhileWaitingOnLimiter checks that waiters holding limiter reservations give them back
// when the key is paused, and resume after the pause at the limiter's pace, not in a burst.
// pauseThreeWaiters, in a synctest bubble, lets one request through key "a" of th at once, queues
// three more behind it, pauses the key at 50ms until until (from the start), and returns when each
// of the three left, in order.
func pauseThreeWaiters(t *testing.T, th *Throttle, until time.Duration) []time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, th.Wait(context.Background(), "a")) // due at once
	var mu sync.Mutex
	var at []time.Duration
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			assert.NoError(t, th.Wait(context.Background(), "a"))
			mu.Lock()
			at = append(at, time.Since(start))
			mu.Unlock()
		})
		synctest.Wait()
	}
	time.Sleep(50 * time.Millisecond)
	th.Pause("a", start.Add(until))
	wg.Wait()
	sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
	return at
}

func TestPauseWhileWaitingOnLimiter(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		until time.Duration // the pause, set at 50ms, ends at until
		want  []time.Duration
	}{
		{"long pause", time.Second, []time.Duration{time.Second, 1100 * ms, 1200 * ms}},
		// The slots at 100, 200 and 300ms are given back at 50ms; had they been kept, the first
		// waiter would lose its slot to the pause and go last, at 400ms.
		{"short pause", 150 * ms, []time.Duration{150 * ms, 250 * ms, 350 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				th := newThrottle(t, leaky(10, 10))
				// waiters hold 100, 200 and 300ms
				assert.Equal(t, tt.want, pauseThreeWaiters(t, th, tt.until))
			})
		})
	}
}

// slotSchedule is a limiter whose slots never move, as a shared limiter's booked slots in a store:
// a slot every interval from the first Reserve, and a slot given back is lost (counted).
type slotSchedule struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
	lost     int
}

func (s *slotSchedule) Reserve(now time.Time) (Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.next
	if at.Before(now) {
		at = now
	}
	s.next = at.Add(s.interval)
	return &fixedSlot{s: s, at: at}, nil
}

type fixedSlot struct {
	s  *slotSchedule
	at time.Time
}

func (r *fixedSlot) Delay(now time.Time) time.Duration { return max(r.at.Sub(now), 0) }
func (r *fixedSlot) Changed() <-chan struct{}          { return nil }
func (r *fixedSlot) Cancel(now time.Time) {
	if r.Delay(now) > 0 {
		r.s.mu.Lock()
		r.s.lost++
		r.s.mu.Unlock()
	}
}

// TestPauseKeepsSlotsAfterIt: a pause gives back only the reservations that would come due inside
// it. A limiter whose slots cannot move up (a shared schedule gives back only its last slot) keeps
// the ones after the pause; giving those back too would lose them and leave the schedule idle for
// as long after the pause.
func TestPauseKeepsSlotsAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sched := &slotSchedule{interval: 100 * time.Millisecond}
		th := newThrottle(t, WithLimiter(func(string) (Limiter, error) { return sched, nil }))
		// Slots at 100, 200 and 300ms; the pause covers the one at 100ms only. Its waiter books
		// again after the pause, behind the others: the next slot, 400ms.
		at := pauseThreeWaiters(t, th, 150*time.Millisecond)
		assert.Equal(t, []time.Duration{200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}, at)
		assert.Equal(t, 1, sched.lost, "only the slot inside the pause is given back")
	})
}

func TestPauseDeadlineAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t)
		start := time.Now()
		th.Pause("a", start.Add(2*time.Second))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := th.Wait(ctx, "a")
		var wd *WouldExceedDeadlineError
		require.ErrorAs(t, err, &wd)
		assert.Equal(t, 2*time.Second, wd.Wait)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Duration(0), time.Since(start))

		ctx2, cancel2 := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- th.Wait(ctx2, "a") }()
		synctest.Wait()
		time.Sleep(300 * time.Millisecond)
		cancel2()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, 300*time.Millisecond, time.Since(start))

		assert.ErrorIs(t, th.Wait(ctx2, "a"), context.Canceled, "an ended context is checked first")
	})
}

func TestThrottleLimiterPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var created atomic.Int32
		th := newThrottle(t, WithLimiter(func(key string) (Limiter, error) {
			created.Add(1)
			if key == "free" {
				return nil, nil // no pace for this key
			}
			return NewTokenBucket(10, 1)
		}))
		at, errs := waitAll(t, th, context.Background(), "a", "b", "a", "free", "free", "free", "b", "a")
		assert.Equal(t, make([]error, 8), errs)
		ms := time.Millisecond
		assert.Equal(t, []time.Duration{0, 0, 100 * ms, 0, 0, 0, 100 * ms, 200 * ms}, at)
		assert.Equal(t, int32(3), created.Load(), "one limiter per key")
	})
}

func TestThrottleFactoryError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	th := newThrottle(t, WithLimiter(func(string) (Limiter, error) {
		calls++
		if calls == 1 {
			return nil, boom
		}
		return NewTokenBucket(1, 1)
	}))
	assert.ErrorIs(t, th.Wait(context.Background(), "a"), boom)
	assert.NoError(t, th.Wait(context.Background(), "a"), "the factory is asked again")
	assert.Equal(t, 2, calls)
}

func TestThrottleBacklogFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, leaky(10, 1))
		require.NoError(t, th.Wait(context.Background(), "a"))
		done := make(chan error)
		go func() { done <- th.Wait(context.Background(), "a") }()
		synctest.Wait()
		assert.ErrorIs(t, th.Wait(context.Background(), "a"), ErrBacklogFull)
		assert.NoError(t, <-done)
	})
}

func keysOf(th *Throttle) []string {
	th.mu.Lock()
	defer th.mu.Unlock()
	var keys []string
	for p := th.lru.newest; p != nil; p = p.older {
		keys = append(keys, p.key)
	}
	return keys
}

// A partition acquired, by the lock-free fast path or under the lock, is never evicted while it is
// held, however the keys race for a set too small for them.
func TestAcquiredPartitionsAreNotEvicted(t *testing.T) {
	th := newThrottle(t, WithMaxKeys(2), leaky(1e9, 1<<20))
	keys := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 2000 {
				key := keys[(g+i/50)%len(keys)] // runs of one key, so the fast path is taken
				p, err := th.acquire(key, "")
				if errors.Is(err, ErrTooManyKeys) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				th.mu.Lock()
				held := th.parts[key] == p
				th.mu.Unlock()
				p.refs.Add(-1)
				if !held {
					t.Errorf("key %s: the partition acquired was evicted while held", key)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestBoundedPartitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		th := newThrottle(t, WithMaxKeys(2))
		require.NoError(t, th.Wait(ctx, "a"))
		require.NoError(t, th.Wait(ctx, "b"))
		th.Pause("a", time.Now().Add(time.Hour))
		assert.Equal(t, []string{"a", "b"}, keysOf(th), "most recently used first")

		require.NoError(t, th.Wait(ctx, "c")) // evicts b, the least recently used
		assert.Equal(t, []string{"c", "a"}, keysOf(th))
		assert.Equal(t, 2, th.Len())

		// A busy partition is never evicted: a request waits on a's pause.
		waitCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- th.Wait(waitCtx, "a") }()
		synctest.Wait()
		th.mu.Lock()
		th.lru.touch(th.parts["c"]) // make a the least recently used
		th.mu.Unlock()
		require.NoError(t, th.Wait(ctx, "d")) // evicts c, not the busy a
		assert.Equal(t, []string{"d", "a"}, keysOf(th))
		assert.False(t, th.PausedUntil("a").IsZero(), "a kept its pause")

		// Every partition busy: a new key is refused; a pause for it is dropped.
		done2 := make(chan error)
		th.Pause("d", time.Now().Add(time.Hour))
		go func() { done2 <- th.Wait(waitCtx, "d") }()
		synctest.Wait()
		assert.ErrorIs(t, th.Wait(ctx, "e"), ErrTooManyKeys)
		th.Pause("e", time.Now().Add(time.Hour))
		assert.True(t, th.PausedUntil("e").IsZero())
		assert.Equal(t, 2, th.Len())

		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.ErrorIs(t, <-done2, context.Canceled)
		require.NoError(t, th.Wait(ctx, "e"), "idle again: evicts the least recently used")
		assert.Equal(t, 2, th.Len())
	})
}

// TestPauseLongerThanMaxWaitIsRefused: a pause longer than WithMaxWait refuses the requests waiting
// on the limiter, even one whose slot comes after the pause.
func TestPauseLongerThanMaxWaitIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sched := &slotSchedule{interval: 5 * time.Second}
		th := newThrottle(t, WithLimiter(func(string) (Limiter, error) { return sched, nil }), WithMaxWait(time.Second))
		start := time.Now()
		require.NoError(t, th.Wait(context.Background(), "a")) // slot 0
		done := make(chan error, 1)
		go func() { done <- th.Wait(context.Background(), "a") }() // slot at 5 s
		synctest.Wait()
		th.Pause("a", start.Add(3*time.Second))
		err := <-done
		var tl *WaitTooLongError
		require.ErrorAs(t, err, &tl)
		assert.True(t, tl.Paused, "refused for the pause")
		assert.Equal(t, time.Duration(0), time.Since(start), "at once")
	})
}
