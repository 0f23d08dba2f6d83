package throttle

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaxPauseBoundsRetryAfter: a Retry-After pauses the key for at most WithMaxPause's maximum, so a
// huge one (issue 13 §8: "Retry-After: 999999999999") cannot shut the host off for a day; without
// the option it pauses for the 24 hours the parser clamps it to.
func TestMaxPauseBoundsRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		opts       []Option
		retryAfter string
		wantPause  time.Duration // 0: not paused
	}{
		{"huge, bounded", []Option{WithMaxPause(time.Minute)}, "999999999999", time.Minute},
		{"huge, unbounded: the clamped day", nil, "999999999999", 24 * time.Hour},
		{"below the bound", []Option{WithMaxPause(time.Minute)}, "5", 5 * time.Second},
		{"at the bound", []Option{WithMaxPause(time.Minute)}, "60", time.Minute},
		{"an hour, bound long enough for it", []Option{WithMaxPause(2 * time.Hour)}, "3600", time.Hour},
		{"bound 0: never paused", []Option{WithMaxPause(0)}, "5", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				th := newThrottle(t, tt.opts...)
				calls := 0
				rt := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
					calls++
					if calls == 1 {
						return response(http.StatusTooManyRequests, http.Header{"Retry-After": {tt.retryAfter}}), nil
					}
					return response(http.StatusOK, nil), nil
				}), th)
				start := time.Now()
				resp, err := rt.RoundTrip(newRequest(t, context.Background(), "http://a.test/"))
				require.NoError(t, err)
				assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
				if tt.wantPause == 0 {
					assert.True(t, th.PausedUntil("a.test").IsZero())
				} else {
					assert.Equal(t, start.Add(tt.wantPause), th.PausedUntil("a.test"))
				}
				if tt.wantPause > time.Hour {
					return // the unbounded case: not waited out here
				}
				resp, err = rt.RoundTrip(newRequest(t, context.Background(), "http://a.test/"))
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, tt.wantPause, time.Since(start), "the next request waited out the bounded pause")
			})
		})
	}
}

func TestMaxPauseNegativeIsInvalid(t *testing.T) {
	th, err := New(WithMaxPause(-time.Second))
	assert.Nil(t, th)
	assert.ErrorIs(t, err, ErrInvalidOption)
}

// TestMaxPauseLeavesManualPauses: Pause and SetPause are not bounded by WithMaxPause.
func TestMaxPauseLeavesManualPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, WithMaxPause(time.Second))
		start := time.Now()
		th.Pause("a", start.Add(time.Hour))
		th.SetPause("b", start.Add(time.Hour))
		assert.Equal(t, start.Add(time.Hour), th.PausedUntil("a"))
		assert.Equal(t, start.Add(time.Hour), th.PausedUntil("b"))
	})
}

// TestResumeAndSetPause: a pause can be ended, shortened and extended from Go while requests sit it
// out; they leave at the new end. Other keys are untouched.
func TestResumeAndSetPause(t *testing.T) {
	tests := []struct {
		name   string
		change func(th *Throttle, start time.Time) // at start+10s, the key paused until start+1h
		want   time.Duration                       // when the waiting request leaves
	}{
		{"Resume", func(th *Throttle, _ time.Time) { th.Resume("a") }, 10 * time.Second},
		{"SetPause shorter", func(th *Throttle, s time.Time) { th.SetPause("a", s.Add(30*time.Second)) }, 30 * time.Second},
		{"SetPause longer", func(th *Throttle, s time.Time) { th.SetPause("a", s.Add(2*time.Hour)) }, 2 * time.Hour},
		{"SetPause in the past", func(th *Throttle, s time.Time) { th.SetPause("a", s) }, 10 * time.Second},
		{"SetPause zero time", func(th *Throttle, _ time.Time) { th.SetPause("a", time.Time{}) }, 10 * time.Second},
		{"Pause earlier: no change", func(th *Throttle, s time.Time) { th.Pause("a", s.Add(time.Minute)) }, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				th := newThrottle(t)
				start := time.Now()
				th.Pause("a", start.Add(time.Hour))
				th.Pause("b", start.Add(time.Hour))
				left := make(chan time.Duration, 1)
				go func() {
					assert.NoError(t, th.Wait(context.Background(), "a"))
					left <- time.Since(start)
				}()
				time.Sleep(10 * time.Second)
				tt.change(th, start)
				assert.Equal(t, tt.want, <-left)
				assert.True(t, th.PausedUntil("a").IsZero())
				if tt.want < time.Hour {
					assert.Equal(t, start.Add(time.Hour), th.PausedUntil("b"), "another key keeps its pause")
				}
			})
		})
	}
}

// TestSetPauseReachesLimiterWaiters: a pause set while requests hold limiter reservations holds them
// back (they give the reservations back), and they go at the pace after it.
func TestSetPauseReachesLimiterWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, leaky(1, 10)) // one a second
		ctx := context.Background()
		start := time.Now()
		require.NoError(t, th.Wait(ctx, "a")) // at 0
		left := make(chan time.Duration, 1)
		go func() {
			assert.NoError(t, th.Wait(ctx, "a")) // due at 1s
			left <- time.Since(start)
		}()
		synctest.Wait()
		th.SetPause("a", start.Add(5*time.Second))
		assert.Equal(t, 5*time.Second, <-left)
	})
}

// TestResumeUnknownKeyCreatesNothing: Resume and a past SetPause of a key the Throttle does not know
// leave it unknown.
func TestResumeUnknownKeyCreatesNothing(t *testing.T) {
	th := newThrottle(t)
	th.Resume("nobody")
	th.SetPause("nobody", time.Now().Add(-time.Second))
	assert.Equal(t, 0, th.Len())
}
