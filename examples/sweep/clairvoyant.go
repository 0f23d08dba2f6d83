package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/throttle"
)

// clairvoyant is the client that sets each cell's physical limit: it knows the server's algorithm,
// limit and phases and the window's phase, and keeps a replica of the server's state. Each request
// is booked to leave at the earliest instant at which, arriving leg later, the replica admits it,
// after every request booked before it; the booking is committed to the replica at that arrival.
// Requests arrive in the order they were booked (the wire delays each by the same leg), so the
// replica decides as the server does and the client never draws a 429 (the sweep checks this).
// Reserving in order, each at its earliest admitted arrival, is as fast as any client can be: every
// algorithm here admits a request at t only if it admits it at every later t, given the same past.
//
// It is a throttle.Limiter whose reservations never move; several clients may share one (the
// physical limit of clients sharing a key is that of one client with all their workers). Safe for
// concurrent use.
type clairvoyant struct {
	leg time.Duration

	mu     sync.Mutex
	phases []replica
	last   time.Time // the latest booked arrival
}

// replica is the clairvoyant's copy of one phase of the server.
type replica struct {
	from  time.Time
	alg   algorithm.Algorithm
	state algorithm.State
}

func newClairvoyant(rules []testserver.Rule, offsets []time.Duration, start time.Time, leg time.Duration) (*clairvoyant, error) {
	c := &clairvoyant{leg: leg}
	for i, r := range rules {
		alg, err := algorithm.New(r.Algorithm, algorithm.Config{Limit: r.Limit, Window: r.Window, Burst: r.Burst})
		if err != nil {
			return nil, fmt.Errorf("clairvoyant: %w", err)
		}
		c.phases = append(c.phases, replica{from: start.Add(offsets[i]), alg: alg})
	}
	return c, nil
}

// phaseAt returns the index of the phase deciding at t, and when the next one starts (the zero
// time for the last).
func (c *clairvoyant) phaseAt(t time.Time) (int, time.Time) {
	i := 0
	for j := 1; j < len(c.phases); j++ {
		if !t.Before(c.phases[j].from) {
			i = j
		}
	}
	var next time.Time
	if i+1 < len(c.phases) {
		next = c.phases[i+1].from
	}
	return i, next
}

// Reserve implements throttle.Limiter.
func (c *clairvoyant) Reserve(now time.Time) (throttle.Reservation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := now.Add(c.leg)
	if t.Before(c.last) {
		t = c.last
	}
	for {
		i, next := c.phaseAt(t)
		p := &c.phases[i]
		d := p.alg.Decide(&p.state, t, 1)
		if d.Allowed {
			p.alg.Commit(&p.state, t, 1)
			break
		}
		if d.RetryAfter == algorithm.Never {
			return nil, fmt.Errorf("clairvoyant: the server never admits a request (%s %d/%v)", p.alg.Name(), p.alg.Limit(), p.alg.Window())
		}
		t = t.Add(d.RetryAfter)
		if !next.IsZero() && t.After(next) {
			t = next
		}
	}
	c.last = t
	return fixedReservation{at: t.Add(-c.leg)}, nil
}

// fixedReservation is due at a fixed instant and never moves. Cancel is a no-op: the clairvoyant
// has already committed it to its replica, and its runs cancel nothing (they wait without bound).
type fixedReservation struct{ at time.Time }

func (r fixedReservation) Delay(now time.Time) time.Duration { return max(0, r.at.Sub(now)) }
func (fixedReservation) Changed() <-chan struct{}            { return nil }
func (fixedReservation) Cancel(time.Time)                    {}
