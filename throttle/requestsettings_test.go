package throttle

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/request"
)

// TestRequestSettings: a request's own key and maximum wait (package request) replace the
// Throttle's for that request only; invalid settings refuse it without sending, closing its body.
func TestRequestSettings(t *testing.T) {
	tests := []struct {
		name     string
		ctx      func(context.Context) context.Context
		wantKey  string
		wantErr  error
		wantWait time.Duration
	}{
		{"none: the host, the Throttle's max wait refuses the hour's pause", nil, "a.test", ErrWaitTooLong, 0},
		{"its own key: not paused", func(ctx context.Context) context.Context { return request.WithKey(ctx, "tenant-42") },
			"tenant-42", nil, 0},
		{"its own max wait: waits the pause out", func(ctx context.Context) context.Context { return request.WithMaxWait(ctx, 2*time.Hour) },
			"a.test", nil, time.Hour},
		{"its own max wait 0: waits as long as it takes", func(ctx context.Context) context.Context { return request.WithMaxWait(ctx, 0) },
			"a.test", nil, time.Hour},
		{"invalid settings", func(ctx context.Context) context.Context { return request.WithKey(ctx, "") },
			"", request.ErrInvalid, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				th := newThrottle(t, WithMaxWait(time.Minute))
				start := time.Now()
				th.Pause("a.test", start.Add(time.Hour))
				var sentKey string
				rt := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sentKey = th.keyFunc(r)
					if k, ok := request.From(r.Context()).Key(); ok {
						sentKey = k
					}
					return response(http.StatusOK, nil), nil
				}), th)
				ctx := context.Background()
				if tt.ctx != nil {
					ctx = tt.ctx(ctx)
				}
				body := &trackedBody{Reader: strings.NewReader("x")}
				req, err := http.NewRequestWithContext(ctx, "PUT", "http://a.test/", body)
				require.NoError(t, err)
				resp, err := rt.RoundTrip(req)
				if tt.wantErr != nil {
					assert.Nil(t, resp)
					assert.True(t, errors.Is(err, tt.wantErr), "%v", err)
					assert.True(t, body.closed.Load())
					assert.Empty(t, sentKey, "nothing sent")
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tt.wantKey, sentKey)
				assert.Equal(t, tt.wantWait, time.Since(start))
			})
		})
	}
}

// TestWaitHonoursRequestMaxWait: Throttle.Wait reads the maximum wait from its context too.
func TestWaitHonoursRequestMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t)
		th.Pause("a", time.Now().Add(time.Minute))
		err := th.Wait(request.WithMaxWait(context.Background(), time.Second), "a")
		var tooLong *WaitTooLongError
		require.ErrorAs(t, err, &tooLong)
		assert.Equal(t, time.Second, tooLong.Max)
		assert.ErrorIs(t, th.Wait(request.WithAttempts(context.Background(), -1), "a"), request.ErrInvalid)
	})
}
