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

// TestMaxWait: a wait predicted longer than WithMaxWait is refused at once with *WaitTooLongError,
// for a pause and for the pace, and gives back what it reserved; shorter waits go through.
func TestMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th, err := New(WithMaxWait(time.Minute),
			WithLimiter(func(string) (Limiter, error) { return NewLeakyBucket(1.0/30, 10) })) // one per 30 s
		require.NoError(t, err)
		ctx := context.Background()

		start := time.Now()
		require.NoError(t, th.Wait(ctx, "a")) // due at once
		require.NoError(t, th.Wait(ctx, "a")) // 30 s
		require.NoError(t, th.Wait(ctx, "a")) // 30 s more
		assert.Equal(t, time.Minute, time.Since(start))

		// Three more would be due in 30, 60 and 90 s: the third is refused at once.
		require.NoError(t, th.Wait(ctx, "a"))
		err = th.Wait(ctx, "a") // 30 s: fine
		require.NoError(t, err)
		th2, err := New(WithMaxWait(45*time.Second),
			WithLimiter(func(string) (Limiter, error) { return NewLeakyBucket(1.0/30, 10) }))
		require.NoError(t, err)
		require.NoError(t, th2.Wait(ctx, "b"))
		require.NoError(t, th2.Wait(ctx, "b")) // 30 s
		done := make(chan error, 1)
		go func() { done <- th2.Wait(ctx, "b") }() // due in 30 s: waits
		synctest.Wait()
		before := time.Now()
		err = th2.Wait(ctx, "b") // due in 60 s: refused at once
		var tooLong *WaitTooLongError
		require.ErrorAs(t, err, &tooLong)
		assert.True(t, errors.Is(err, ErrWaitTooLong))
		assert.Equal(t, WaitTooLongError{Key: "b", Wait: time.Minute, Max: 45 * time.Second}, *tooLong)
		assert.Equal(t, before, time.Now(), "refused without waiting")
		require.NoError(t, <-done)
		// The refused reservation was given back: the next one is due 30 s after the last sent.
		sent := time.Now()
		require.NoError(t, th2.Wait(ctx, "b"))
		assert.Equal(t, 30*time.Second, time.Since(sent))

		// A pause longer than the maximum is refused at once, a shorter one waited out.
		th2.Pause("c", time.Now().Add(time.Minute))
		err = th2.Wait(ctx, "c")
		require.ErrorAs(t, err, &tooLong)
		assert.True(t, tooLong.Paused)
		assert.Contains(t, err.Error(), "Retry-After")
		time.Sleep(30 * time.Second)
		pausedAt := time.Now()
		require.NoError(t, th2.Wait(ctx, "c"))
		assert.Equal(t, 30*time.Second, time.Since(pausedAt))
	})
}

// TestMaxWaitInvalid: a negative maximum is an invalid option.
func TestMaxWaitInvalid(t *testing.T) {
	_, err := New(WithMaxWait(-time.Second))
	assert.ErrorIs(t, err, ErrInvalidOption)
}
