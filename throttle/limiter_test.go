package throttle

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every Limiter built here admits one request at once and then one every 100ms.
var conformance = []struct {
	name string
	new  func() (Limiter, error)
}{
	{"token bucket", func() (Limiter, error) { return NewTokenBucket(10, 1) }},
	{"leaky bucket", func() (Limiter, error) { return NewLeakyBucket(10, 100) }},
}

const step = 100 * time.Millisecond

func newLimiter(t *testing.T, f func() (Limiter, error)) Limiter {
	t.Helper()
	l, err := f()
	require.NoError(t, err)
	return l
}

func reserve(t *testing.T, l Limiter, now time.Time) Reservation {
	t.Helper()
	r, err := l.Reserve(now)
	require.NoError(t, err)
	return r
}

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// TestConformance runs the Limiter contract over every implementation, with explicit time.
func TestConformance(t *testing.T) {
	for _, impl := range conformance {
		t.Run(impl.name, func(t *testing.T) {
			t.Run("paces one request per interval", func(t *testing.T) {
				l := newLimiter(t, impl.new)
				for i := range 5 {
					assert.Equal(t, time.Duration(i)*step, reserve(t, l, t0).Delay(t0), "request %d", i)
				}
			})
			t.Run("delay counts down with time", func(t *testing.T) {
				l := newLimiter(t, impl.new)
				reserve(t, l, t0)
				r := reserve(t, l, t0)
				assert.Equal(t, step, r.Delay(t0))
				assert.Equal(t, 40*time.Millisecond, r.Delay(t0.Add(60*time.Millisecond)))
				assert.Equal(t, time.Duration(0), r.Delay(t0.Add(step)))
				assert.Equal(t, time.Duration(0), r.Delay(t0.Add(time.Hour)))
			})
			t.Run("cancel gives a pending reservation back", func(t *testing.T) {
				l := newLimiter(t, impl.new)
				reserve(t, l, t0)
				r := reserve(t, l, t0)
				r.Cancel(t0)
				assert.Equal(t, step, reserve(t, l, t0).Delay(t0))
			})
			t.Run("cancel twice gives back once", func(t *testing.T) {
				l := newLimiter(t, impl.new)
				reserve(t, l, t0)
				r := reserve(t, l, t0)
				r.Cancel(t0)
				r.Cancel(t0)
				assert.Equal(t, step, reserve(t, l, t0).Delay(t0))
				assert.Equal(t, 2*step, reserve(t, l, t0).Delay(t0))
			})
			t.Run("cancel of a due reservation is a no-op", func(t *testing.T) {
				l := newLimiter(t, impl.new)
				r := reserve(t, l, t0)
				require.Equal(t, time.Duration(0), r.Delay(t0))
				r.Cancel(t0)
				assert.Equal(t, step, reserve(t, l, t0).Delay(t0))
			})
			t.Run("idle time restores the pace", func(t *testing.T) {
				l := newLimiter(t, impl.new)
				reserve(t, l, t0)
				reserve(t, l, t0)
				later := t0.Add(time.Minute)
				assert.Equal(t, time.Duration(0), reserve(t, l, later).Delay(later))
				assert.Equal(t, step, reserve(t, l, later).Delay(later))
			})
			t.Run("Wait paces in virtual time", func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := newLimiter(t, impl.new)
					start := time.Now()
					for i := range 4 {
						require.NoError(t, Wait(context.Background(), l))
						assert.Equal(t, time.Duration(i)*step, time.Since(start), "request %d", i)
					}
				})
			})
			t.Run("Wait checks the context first and books nothing", func(t *testing.T) {
				l := newLimiter(t, impl.new)
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				assert.ErrorIs(t, Wait(ctx, l), context.Canceled)
				now := time.Now()
				assert.Equal(t, time.Duration(0), reserve(t, l, now).Delay(now))
			})
			t.Run("Wait fails fast past the deadline and gives back", func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := newLimiter(t, impl.new)
					start := time.Now()
					reserve(t, l, start)
					ctx, cancel := context.WithTimeout(context.Background(), step/2)
					defer cancel()
					err := Wait(ctx, l)
					var wd *WouldExceedDeadlineError
					require.ErrorAs(t, err, &wd)
					assert.Equal(t, step, wd.Wait)
					assert.ErrorIs(t, err, context.DeadlineExceeded)
					assert.Equal(t, time.Duration(0), time.Since(start), "must not sleep towards a certain failure")
					assert.Equal(t, step, reserve(t, l, start).Delay(start), "the reservation was given back")
				})
			})
			t.Run("Wait within the deadline succeeds", func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := newLimiter(t, impl.new)
					start := time.Now()
					reserve(t, l, start)
					ctx, cancel := context.WithTimeout(context.Background(), step)
					defer cancel()
					require.NoError(t, Wait(ctx, l))
					assert.Equal(t, step, time.Since(start))
				})
			})
			t.Run("cancelled Wait returns at once and gives back", func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := newLimiter(t, impl.new)
					start := time.Now()
					reserve(t, l, start)
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan error, 1)
					go func() { done <- Wait(ctx, l) }()
					synctest.Wait() // the waiter holds the 100ms reservation
					time.Sleep(step / 4)
					cancel()
					synctest.Wait()
					select {
					case err := <-done:
						assert.ErrorIs(t, err, context.Canceled)
					default:
						t.Fatal("Wait did not return when its context was cancelled")
					}
					now := time.Now()
					assert.Equal(t, step/4, now.Sub(start))
					// The next request takes the given-back slot at 100ms, not 200ms.
					assert.Equal(t, step-step/4, reserve(t, l, now).Delay(now))
				})
			})
			t.Run("nil limiter never waits", func(t *testing.T) {
				assert.NoError(t, Wait(context.Background(), nil))
			})
		})
	}
}

func TestInvalidParameters(t *testing.T) {
	nan := func() float64 { var z float64; return z / z }()
	inf := func() float64 { var z float64; return 1 / z }()
	tests := []struct {
		name string
		new  func() (Limiter, error)
		want error
	}{
		{"token zero rate", func() (Limiter, error) { return NewTokenBucket(0, 1) }, ErrInvalidRate},
		{"token negative rate", func() (Limiter, error) { return NewTokenBucket(-1, 1) }, ErrInvalidRate},
		{"token NaN rate", func() (Limiter, error) { return NewTokenBucket(nan, 1) }, ErrInvalidRate},
		{"token +Inf rate", func() (Limiter, error) { return NewTokenBucket(inf, 1) }, ErrInvalidRate},
		{"token -Inf rate", func() (Limiter, error) { return NewTokenBucket(-inf, 1) }, ErrInvalidRate},
		{"token zero burst", func() (Limiter, error) { return NewTokenBucket(1, 0) }, ErrInvalidBurst},
		{"token negative burst", func() (Limiter, error) { return NewTokenBucket(1, -5) }, ErrInvalidBurst},
		{"leaky zero rate", func() (Limiter, error) { return NewLeakyBucket(0, 1) }, ErrInvalidRate},
		{"leaky negative rate", func() (Limiter, error) { return NewLeakyBucket(-3, 1) }, ErrInvalidRate},
		{"leaky NaN rate", func() (Limiter, error) { return NewLeakyBucket(nan, 1) }, ErrInvalidRate},
		{"leaky +Inf rate", func() (Limiter, error) { return NewLeakyBucket(inf, 1) }, ErrInvalidRate},
		{"leaky faster than 1/ns", func() (Limiter, error) { return NewLeakyBucket(3e9, 1) }, ErrInvalidRate},
		{"leaky slower than expressible", func() (Limiter, error) { return NewLeakyBucket(1e-12, 1) }, ErrInvalidRate},
		{"leaky negative backlog", func() (Limiter, error) { return NewLeakyBucket(1, -1) }, ErrInvalidBacklog},
		{"token ok", func() (Limiter, error) { return NewTokenBucket(0.5, 1) }, nil},
		{"leaky ok, zero backlog", func() (Limiter, error) { return NewLeakyBucket(1e9, 0) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.new()
			if tt.want == nil {
				require.NoError(t, err)
				assert.NotNil(t, l)
				return
			}
			assert.Nil(t, l)
			assert.True(t, errors.Is(err, tt.want), "got %v, want %v", err, tt.want)
		})
	}
}
