package throttle

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 4: "It starts with no pace". A server that never throttles and sends no rate-limit
// headers gives the Adaptive limiter no signal, so it paces nothing: after the cold start's first
// response, every request goes at once, also after a quiet spell.

// quietServer answers every request with a 200 and no headers, counting them.
type quietServer struct{ n int }

func (s *quietServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.n++
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// TestAdaptiveUnpacedWithoutSignal runs 1,000 sequential requests through a Throttle with the
// Adaptive limiter against a server that never throttles and sends no headers, in virtual time:
// all of them go at virtual time 0 (nothing waits), and so do 1,000 more after a quiet spell.
func TestAdaptiveUnpacedWithoutSignal(t *testing.T) {
	tests := []struct {
		name  string
		quiet time.Duration // the quiet spell before the second 1,000
	}{
		{"a short pause", time.Second},
		{"one half-life", DefaultDecayHalfLife},
		{"forgotten (twenty half-lives)", 21 * DefaultDecayHalfLife},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var a *Adaptive
				th, err := New(WithLimiter(func(key string) (Limiter, error) {
					l, err := NewAdaptive()
					a = l
					return l, err
				}))
				require.NoError(t, err)
				srv := &quietServer{}
				tr := NewTransport(srv, th)
				run := func() {
					start := time.Now()
					for i := range 1000 {
						req, err := http.NewRequest(http.MethodGet, "http://api.test/item", nil)
						require.NoError(t, err)
						resp, err := tr.RoundTrip(req)
						require.NoError(t, err, "request %d", i)
						require.Equal(t, http.StatusOK, resp.StatusCode)
						require.NoError(t, resp.Body.Close())
					}
					assert.Zero(t, time.Since(start), "no request waited for a pace")
				}
				run()
				time.Sleep(tt.quiet)
				run()
				assert.Equal(t, 2000, srv.n)
				require.NotNil(t, a)
				s := a.Stats()
				assert.Zero(t, s.Rate, "no signal: no pace")
				assert.Equal(t, int64(2000), s.Successes)
				assert.Zero(t, s.Cuts)
				assert.Zero(t, s.InFlight)
			})
		})
	}
}

// TestAdaptiveUnpacedReserve: with explicit time, after a first response without a signal every
// reservation is due at once, even 1,000 at one instant with none answered yet; a response with
// rate-limit headers ends that.
func TestAdaptiveUnpacedReserve(t *testing.T) {
	a := newAdaptive(t)
	r, err := a.Reserve(at0)
	require.NoError(t, err)
	require.Zero(t, r.Delay(at0))
	a.Observe(at0, statusResponse(http.StatusOK), nil)
	for i := range 1000 {
		r, err := a.Reserve(at0)
		require.NoError(t, err)
		require.Zero(t, r.Delay(at0), "request %d", i)
	}
	s := a.Stats()
	assert.Zero(t, s.Rate)
	assert.Equal(t, sendRingSize, s.InFlight, "sends are still recorded (as many as the ring holds)")
	assert.Zero(t, s.Waiting)

	// A declared rate is a signal: the pace is that rate from now on.
	a.Observe(at0.Add(ms(1)), policyOnlyResponse(101, time.Second), nil)
	assert.InDelta(t, 100*(1-DefaultHeadroom), a.Rate(), 1e-9)
	_, _ = a.Reserve(at0.Add(ms(1)))
	r, _ = a.Reserve(at0.Add(ms(1)))
	assert.Positive(t, r.Delay(at0.Add(ms(1))))
}

// TestAdaptiveUnpacedFirstCut: the first throttle after an unpaced start cuts to just under what
// the server admitted (the measured success rate), not to a cut of the initial rate: a caller
// that sent 100/s unpaced for three seconds goes on at about 100/s.
func TestAdaptiveUnpacedFirstCut(t *testing.T) {
	tests := []struct {
		name    string
		perSec  int
		seconds int
	}{
		{"100/s", 100, 3},
		{"1,000/s", 1000, 2},
		{"30/s", 30, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdaptive(t)
			gap := time.Second / time.Duration(tt.perSec)
			now := at0
			for i := range tt.perSec * tt.seconds {
				r, err := a.Reserve(now)
				require.NoError(t, err)
				require.Zero(t, r.Delay(now), "request %d", i)
				a.Observe(now.Add(ms(1)), statusResponse(http.StatusOK), nil)
				now = now.Add(gap)
			}
			_, _ = a.Reserve(now)
			a.Observe(now.Add(ms(1)), statusResponse(http.StatusTooManyRequests), nil)
			s := a.Stats()
			want := float64(tt.perSec)
			assert.Equal(t, int64(1), s.Cuts)
			assert.InDelta(t, want, s.Estimate, want*0.05, "the estimate is what the server admitted")
			assert.InDelta(t, want*(1-cutMargin), s.Rate, want*0.05, "just under it, not a cut of the initial rate")
			// The pace is kept from now on.
			r, _ := a.Reserve(now.Add(ms(2)))
			r2, _ := a.Reserve(now.Add(ms(2)))
			assert.Positive(t, r2.Delay(now.Add(ms(2)))+r.Delay(now.Add(ms(2))))
		})
	}
}
