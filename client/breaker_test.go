package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/retry"
)

// TestWithBreaker: the breaker sits under the retry layer (it counts every attempt) and uses the
// stack's key; invalid breaker options make the stack invalid.
func TestWithBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		arrivals := 0
		base := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrivals++
			w.WriteHeader(http.StatusServiceUnavailable)
		})}
		tr := NewTransport(base, WithoutPace(),
			WithKeyFunc(func(r *http.Request) string { return "tenant" }),
			WithRetry(retry.WithMaxAttempts(4), retry.WithBudget(nil)),
			WithBreaker(breaker.WithMode(breaker.FailFast), breaker.WithMinRequests(3), breaker.WithCooldown(time.Minute)))
		require.NoError(t, tr.Err())
		req := httptest.NewRequestWithContext(context.Background(), "GET", "http://api.test/", nil)
		req.RequestURI = ""
		resp, err := tr.RoundTrip(req)
		assert.Nil(t, resp)
		assert.ErrorIs(t, err, breaker.ErrCircuitOpen, "the fourth attempt found the circuit open")
		assert.Equal(t, 3, arrivals, "three attempts reached the server")
		st, _ := tr.Breaker().State("tenant", time.Now())
		assert.Equal(t, breaker.Open, st)

		assert.ErrorIs(t, Validate(WithBreaker(breaker.WithMinRequests(0))), ErrInvalidOption)
		assert.Nil(t, New().Transport.(*Transport).Breaker())
	})
}
