package throttle

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// NewTokenBucket returns a Limiter that admits ratePerSec requests per second on average with
// bursts of up to burst requests, built on golang.org/x/time/rate: the bucket holds at most burst
// tokens, starts full, refills at ratePerSec tokens per second, and each request takes one token
// (waiting for it when the bucket is empty, in the order of Reserve calls).
//
// Cancelling a reservation gives its token back as far as x/time/rate allows: fully when no later
// reservation was made, otherwise only the part later reservations did not already count on
// (reservations already made keep their times). The Limiter is safe for concurrent use.
//
// It returns ErrInvalidRate for a rate that is not positive and finite, ErrInvalidBurst for a
// burst below 1.
func NewTokenBucket(ratePerSec float64, burst int) (Limiter, error) {
	if err := checkRate(ratePerSec); err != nil {
		return nil, err
	}
	if burst < 1 {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidBurst, burst)
	}
	return &tokenBucket{lim: rate.NewLimiter(rate.Limit(ratePerSec), burst)}, nil
}

// checkRate reports whether r is a usable rate in requests per second.
func checkRate(r float64) error {
	if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		return fmt.Errorf("%w: got %v", ErrInvalidRate, r)
	}
	return nil
}

type tokenBucket struct {
	lim *rate.Limiter
}

// Reserve books one token at now.
func (b *tokenBucket) Reserve(now time.Time) (Reservation, error) {
	r := b.lim.ReserveN(now, 1)
	if r.DelayFrom(now) == 0 {
		return dueReservation{}, nil // due: nothing to give back, no wrapper to allocate
	}
	return &tokenReservation{r: r}, nil
}

// tokenReservation adapts *rate.Reservation. x/time/rate would restore tokens again on a second
// CancelAt, so cancelled guards it.
type tokenReservation struct {
	r         *rate.Reservation
	cancelled atomic.Bool
}

func (t *tokenReservation) Delay(now time.Time) time.Duration { return t.r.DelayFrom(now) }

// Changed returns nil: an x/time/rate reservation never moves.
func (t *tokenReservation) Changed() <-chan struct{} { return nil }

func (t *tokenReservation) Cancel(now time.Time) {
	if t.r.DelayFrom(now) > 0 && t.cancelled.CompareAndSwap(false, true) {
		t.r.CancelAt(now)
	}
}
