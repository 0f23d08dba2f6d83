package retry_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type closeRecorder struct {
	*strings.Reader
	closed atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }

// TestBrokenNextTransport: a next RoundTripper returning (nil, nil) becomes an error matching
// ErrNoResponse, never a (nil, nil) result.
func TestBrokenNextTransport(t *testing.T) {
	tr, err := retry.NewTransport(rtFunc(func(*http.Request) (*http.Response, error) { return nil, nil }))
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	resp, err := tr.RoundTrip(req)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, retry.ErrNoResponse)
}

// TestZeroTransportAndNilRequest: the zero Transport and a nil request give errors, not panics, and
// the request body is closed.
func TestZeroTransportAndNilRequest(t *testing.T) {
	body := &closeRecorder{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPost, "http://api.test/", body)
	resp, err := (&retry.Transport{}).RoundTrip(req)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, retry.ErrInvalidOption)
	assert.True(t, body.closed.Load())

	tr, err := retry.NewTransport(rtFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("unreachable") }))
	require.NoError(t, err)
	resp, err = tr.RoundTrip(nil)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, retry.ErrNilRequest)
}

// TestHugeBackoffDoesNotPanic: the largest base and maximum delays are valid and do not overflow
// the jitter draw (the wait then ends with the context).
func TestHugeBackoffDoesNotPanic(t *testing.T) {
	calls := 0
	tr, err := retry.NewTransport(rtFunc(func(*http.Request) (*http.Response, error) {
		calls++
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody}, nil
	}), retry.WithBaseDelay(math.MaxInt64), retry.WithMaxDelay(math.MaxInt64), retry.WithMaxAttempts(2))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
	assert.NotPanics(t, func() {
		resp, err := tr.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		_ = err
	})
	assert.Equal(t, 1, calls)
}

// TestObserversAddUp: WithObserver given twice calls both observers.
func TestObserversAddUp(t *testing.T) {
	var a, b countingObserver
	tr, err := retry.NewTransport(rtFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
	}), retry.WithObserver(&a), retry.WithObserver(&b))
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, int64(1), a.attempts.Load())
	assert.Equal(t, int64(1), b.attempts.Load())
}

type countingObserver struct {
	retry.NopObserver
	attempts atomic.Int64
}

func (c *countingObserver) Attempt(*http.Request, int) { c.attempts.Add(1) }
