package redisthrottle

import (
	"math"
	"sync"
	"time"

	"github.com/steadyhttp/steady/throttle"
)

// local is the limiter a Limiter falls back to while Redis is unreachable: the same GCRA as the
// Redis script, in integer nanoseconds of the caller's clock, with a rate that can change. It is
// safe for concurrent use.
type local struct {
	mu       sync.Mutex
	tat      int64 // theoretical arrival time, ns since the Unix epoch
	interval int64 // ns, at least 1
	burst    int64
	rate     float64 // the rate interval was computed from
}

// setRate changes the pace for the reservations booked from now on.
func (g *local) setRate(rate float64, burst int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rate == g.rate && int64(burst) == g.burst {
		return
	}
	g.rate, g.burst = rate, int64(max(burst, 1))
	g.interval = max(int64(math.Ceil(1e9/rate)), 1)
}

// reserve books one request at now, due no earlier than notBefore (ns).
func (g *local) reserve(now time.Time, notBefore int64) throttle.Reservation {
	t := now.UnixNano()
	g.mu.Lock()
	defer g.mu.Unlock()
	booked := max(g.tat, t) + g.interval
	if due := booked - g.burst*g.interval; due < notBefore {
		booked += notBefore - due
	}
	g.tat = booked
	due := booked - g.burst*g.interval
	if due <= t {
		return dueReservation{}
	}
	return &localReservation{g: g, due: time.Unix(0, due), booked: booked, interval: g.interval}
}

// cancel gives the slot booked at booked back if no later one was booked.
func (g *local) cancel(booked, interval int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tat == booked {
		g.tat = booked - interval
	}
}

// localReservation is a reservation booked with the local fallback. It never moves.
type localReservation struct {
	g        *local
	due      time.Time
	booked   int64
	interval int64
	once     sync.Once
}

func (r *localReservation) Delay(now time.Time) time.Duration { return max(r.due.Sub(now), 0) }
func (r *localReservation) Changed() <-chan struct{}          { return nil }
func (r *localReservation) Cancel(now time.Time) {
	if !now.Before(r.due) {
		return
	}
	r.once.Do(func() { r.g.cancel(r.booked, r.interval) })
}

// dueReservation is a reservation that was due when it was made: it never moves and there is
// nothing to give back.
type dueReservation struct{}

func (dueReservation) Delay(time.Time) time.Duration { return 0 }
func (dueReservation) Changed() <-chan struct{}      { return nil }
func (dueReservation) Cancel(time.Time)              {}
