package throttle

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// learningBucket is a leaky bucket that claims to learn its pace (a Learner with a Rate), as an
// adaptive limiter does.
type learningBucket struct {
	Limiter
	rate float64
}

func (l learningBucket) Observe(time.Time, *http.Response, error) {}
func (l learningBucket) Rate() float64                            { return l.rate }

func newLearningBucket(t *testing.T, rate float64) learningBucket {
	lb, err := NewLeakyBucket(rate, 100)
	require.NoError(t, err)
	return learningBucket{Limiter: lb, rate: rate}
}

// TestMaxWaitKnownPaceIsWaitedOut: a known pace is waited out however long the line is.
func TestMaxWaitKnownPaceIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th, err := New(WithMaxWait(45*time.Second),
			WithLimiter(func(string) (Limiter, error) { return NewLeakyBucket(1.0/30, 10) })) // one per 30 s
		require.NoError(t, err)
		start := time.Now()
		for range 4 {
			require.NoError(t, th.Wait(context.Background(), "a"))
		}
		assert.Equal(t, 90*time.Second, time.Since(start))
	})
}

// TestMaxWaitLearnedPace: a learned pace slower than one request per maximum wait is refused at once
// with *WaitTooLongError (its reservation given back); a faster learned pace is waited out even when
// the line makes the wait long.
func TestMaxWaitLearnedPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		th, err := New(WithMaxWait(45*time.Second), WithLimiter(func(key string) (Limiter, error) {
			if key == "slow" {
				return newLearningBucket(t, 1.0/60), nil // the server allows one a minute
			}
			return newLearningBucket(t, 1.0/30), nil
		}))
		require.NoError(t, err)

		require.NoError(t, th.Wait(ctx, "slow")) // due at once
		before := time.Now()
		err = th.Wait(ctx, "slow")
		var tooLong *WaitTooLongError
		require.ErrorAs(t, err, &tooLong)
		assert.True(t, errors.Is(err, ErrWaitTooLong))
		assert.Equal(t, WaitTooLongError{Key: "slow", Wait: time.Minute, Max: 45 * time.Second}, *tooLong)
		assert.Equal(t, before, time.Now(), "refused without waiting")
		time.Sleep(time.Minute)
		require.NoError(t, th.Wait(ctx, "slow"), "the refused slot was given back: due again after a minute")
		assert.Equal(t, time.Minute, time.Since(before))

		start := time.Now()
		for range 4 {
			require.NoError(t, th.Wait(ctx, "fast"))
		}
		assert.Equal(t, 90*time.Second, time.Since(start), "30 s apart, the last one 90 s in line")
	})
}

// TestMaxWaitPause: a pause longer than the maximum is refused at once, a shorter one waited out.
func TestMaxWaitPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th, err := New(WithMaxWait(45 * time.Second))
		require.NoError(t, err)
		ctx := context.Background()
		th.Pause("c", time.Now().Add(time.Minute))
		err = th.Wait(ctx, "c")
		var tooLong *WaitTooLongError
		require.ErrorAs(t, err, &tooLong)
		assert.True(t, tooLong.Paused)
		assert.Equal(t, time.Minute, tooLong.Wait)
		assert.Contains(t, err.Error(), "Retry-After")
		time.Sleep(30 * time.Second)
		pausedAt := time.Now()
		require.NoError(t, th.Wait(ctx, "c"))
		assert.Equal(t, 30*time.Second, time.Since(pausedAt))
	})
}

// TestMaxWaitInvalid: a negative maximum is an invalid option.
func TestMaxWaitInvalid(t *testing.T) {
	_, err := New(WithMaxWait(-time.Second))
	assert.ErrorIs(t, err, ErrInvalidOption)
}

// TestWaitTooLongMessage: the wait is said to the millisecond, and to the second from a minute on
// (an hour's pause read a moment after it began is "1h0m0s", not "59m59.999s": an example's output
// hung on the machine's speed).
func TestWaitTooLongMessage(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{
		{1500*time.Microsecond + 400*time.Nanosecond, "2ms"},
		{59*time.Second + 999*time.Millisecond, "59.999s"},
		{time.Hour - time.Millisecond, "1h0m0s"},
	} {
		err := &WaitTooLongError{Key: "k", Wait: tc.wait, Max: time.Second}
		assert.Contains(t, err.Error(), "would wait "+tc.want+" for its pace", "wait %v", tc.wait)
	}
}

// sharingBucket is a learningBucket that paces slower than the server allows: it leaves a share of
// a declared quota to other clients on the key (a ServerRater, as the throttle/learn learner is).
type sharingBucket struct {
	learningBucket
	server float64
}

func (s sharingBucket) ServerRate() float64 { return s.server }

// TestMaxWaitJudgesTheServersRateNotTheShare: a pace slowed by the share of a quota a learner leaves
// to other clients is no wait the server asked for. Judged by it, two clients on a key of 100 a
// minute lost a batch's queued requests: one, locked out, halved its share ten times
// (a request per 10 m 14 s), and every request in its line was refused with ErrWaitTooLong.
// The server's rate, one request per 0.6 s, is waited out, however slow the share makes the line.
func TestMaxWaitJudgesTheServersRateNotTheShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		th, err := New(WithMaxWait(10*time.Minute), WithLimiter(func(string) (Limiter, error) {
			return sharingBucket{learningBucket: newLearningBucket(t, 100.0/60/1024), server: 100.0 / 60}, nil
		}))
		require.NoError(t, err)
		require.NoError(t, th.Wait(ctx, "a")) // due at once
		start := time.Now()
		require.NoError(t, th.Wait(ctx, "a"), "the share's pace is waited out")
		assert.Equal(t, time.Duration(float64(time.Minute)*1024/100), time.Since(start))
	})
}
