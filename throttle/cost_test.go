package throttle

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/request"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// costLimiter records the costs it is asked to book.
type costLimiter struct {
	mu    sync.Mutex
	costs []int64
}

func (l *costLimiter) Reserve(now time.Time) (Reservation, error) { return l.ReserveN(now, 1) }

func (l *costLimiter) ReserveN(_ time.Time, cost int64) (Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.costs = append(l.costs, cost)
	return dueReservation{}, nil
}

// plainLimiter counts requests only.
type plainLimiter struct{ n int }

func (l *plainLimiter) Reserve(time.Time) (Reservation, error) { l.n++; return dueReservation{}, nil }

// A request's cost (request.WithCost) is booked with a CostReserver, through the Transport and
// Wait alike; a request without one is booked with Reserve; a Limiter that does not weigh requests
// books every request as one.
func TestCostIsReserved(t *testing.T) {
	cl := &costLimiter{}
	th, err := New(WithLimiter(func(string) (Limiter, error) { return cl, nil }))
	require.NoError(t, err)
	rt := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { return response(200, nil), nil }), th)
	ctx := context.Background()
	send(t, request.WithCost(ctx, 1500), rt, "POST", "https://llm.test/v1", "")
	send(t, ctx, rt, "POST", "https://llm.test/v1", "")
	require.NoError(t, th.Wait(request.WithCost(ctx, 7), "llm.test"))
	assert.Equal(t, []int64{1500, 1, 7}, cl.costs)

	pl := &plainLimiter{}
	th, err = New(WithLimiter(func(string) (Limiter, error) { return pl, nil }))
	require.NoError(t, err)
	require.NoError(t, th.Wait(request.WithCost(ctx, 7), "k"))
	assert.Equal(t, 1, pl.n)

	assert.ErrorIs(t, th.Wait(request.WithCost(ctx, 0), "k"), request.ErrInvalid)
}
