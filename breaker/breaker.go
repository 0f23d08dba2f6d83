package breaker

import (
	"sync"
	"time"
)

// Breaker keeps one circuit per key. Create it with New; the zero value is not usable. It is safe
// for concurrent use, starts no goroutines and needs no Close.
type Breaker struct {
	cfg config

	mu       sync.Mutex // guards circuits
	circuits map[string]*circuit
}

// New returns a Breaker configured by opts, or an error wrapping ErrInvalidOption.
func New(opts ...Option) (*Breaker, error) {
	cfg := defaultConfig()
	for i, o := range opts {
		if o == nil {
			return nil, invalid("New: option %d is nil", i)
		}
		if err := o.apply(&cfg); err != nil {
			return nil, err
		}
	}
	return &Breaker{cfg: cfg, circuits: make(map[string]*circuit)}, nil
}

// Mode reports the Breaker's mode (WithMode).
func (b *Breaker) Mode() Mode { return b.cfg.mode }

// circuit is the state of one key.
type circuit struct {
	key string

	mu        sync.Mutex
	state     State
	gen       uint64 // counts state changes: outcomes of an earlier generation are not counted
	win       window
	openUntil time.Time // Open: when the cool-down ends
	started   int       // HalfOpen: probes let go and not yet decided
	succeeded int       // HalfOpen: probes that succeeded
	changed   chan struct{}
}

// Ticket is the permission Allow gives one request; record its outcome with Record, exactly once.
// The zero Ticket (a key the Breaker holds no circuit for) records nothing.
type Ticket struct {
	b     *Breaker
	c     *circuit
	gen   uint64
	probe bool
}

// Probe reports whether the request goes as a probe of a half-open circuit.
func (t Ticket) Probe() bool { return t.probe }

// Allow reports whether a request for key may go at now: a Ticket to record its outcome with, or
// *OpenError when the circuit is open (until its cool-down ends) or half-open with every probe place
// taken. An open circuit whose cool-down has ended half-opens here.
func (b *Breaker) Allow(key string, now time.Time) (Ticket, error) {
	t, _, err := b.allow(key, now)
	return t, err
}

// allow is Allow that also returns, when it refuses, a channel closed at the circuit's next change.
func (b *Breaker) allow(key string, now time.Time) (Ticket, <-chan struct{}, error) {
	c := b.circuit(key)
	if c == nil {
		return Ticket{}, nil, nil
	}
	c.mu.Lock()
	var ev *Event
	if c.state == Open && !now.Before(c.openUntil) {
		ev = c.transition(HalfOpen, now)
	}
	var (
		t   Ticket
		err error
	)
	switch c.state {
	case Closed:
		t = Ticket{b: b, c: c, gen: c.gen}
	case HalfOpen:
		if c.started < b.cfg.probes {
			c.started++
			t = Ticket{b: b, c: c, gen: c.gen, probe: true}
		} else {
			err = &OpenError{Key: key, State: HalfOpen}
		}
	default:
		err = &OpenError{Key: key, State: Open, Until: c.openUntil}
	}
	var changed <-chan struct{}
	if err != nil {
		changed = c.changes()
	}
	c.mu.Unlock()
	b.notify(ev)
	return t, changed, err
}

// Record records the outcome of the request t let go, at now. Outcomes of a request let go in an
// earlier state of the circuit are not counted. Calling it on the zero Ticket does nothing.
func (t Ticket) Record(now time.Time, o Outcome) {
	c := t.c
	if c == nil {
		return
	}
	cfg := &t.b.cfg
	c.mu.Lock()
	var ev *Event
	if t.gen == c.gen {
		switch c.state {
		case Closed:
			if o != Ignored {
				c.win.add(now, o == Failure)
				if c.win.requests >= cfg.minRequests &&
					float64(c.win.failures) >= cfg.failureRatio*float64(c.win.requests) {
					requests, failures := c.win.requests, c.win.failures
					ev = c.transition(Open, now)
					ev.Requests, ev.Failures = requests, failures
					c.openUntil = now.Add(cfg.cooldown)
				}
			}
		case HalfOpen:
			switch o {
			case Ignored:
				c.started-- // its place goes to another probe
				c.signal()
			case Failure:
				ev = c.transition(Open, now)
				c.openUntil = now.Add(cfg.cooldown)
			case Success:
				c.succeeded++
				if c.succeeded >= cfg.probes {
					ev = c.transition(Closed, now)
				}
			}
		}
	}
	c.mu.Unlock()
	t.b.notify(ev)
}

// State reports the state of key's circuit at now (Closed for a key it holds no circuit for), and
// when an open circuit's cool-down ends. It does not change the circuit.
func (b *Breaker) State(key string, now time.Time) (State, time.Time) {
	b.mu.Lock()
	c := b.circuits[key]
	b.mu.Unlock()
	if c == nil {
		return Closed, time.Time{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == Open && !now.Before(c.openUntil) {
		return HalfOpen, time.Time{}
	}
	if c.state == Open {
		return Open, c.openUntil
	}
	return c.state, time.Time{}
}

// Len reports the number of keys the Breaker holds a circuit for (at most WithMaxKeys).
func (b *Breaker) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.circuits)
}

// transition moves c to state to at now, starting a new generation, and returns the event to tell
// the observer (after c.mu is released). c.mu is held.
func (c *circuit) transition(to State, now time.Time) *Event {
	ev := &Event{Key: c.key, From: c.state, To: to, At: now}
	c.state = to
	c.gen++
	c.started, c.succeeded = 0, 0
	if to == Closed {
		c.win.reset()
	}
	c.signal()
	return ev
}

// signal wakes the requests waiting for c to change. c.mu is held.
func (c *circuit) signal() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// changes returns a channel closed at c's next change. c.mu is held.
func (c *circuit) changes() <-chan struct{} {
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

func (b *Breaker) notify(ev *Event) {
	if ev != nil && b.cfg.observer != nil {
		b.cfg.observer(*ev)
	}
}

// circuit returns key's circuit, creating it when needed, or nil when the Breaker is full of
// circuits that are not closed.
func (b *Breaker) circuit(key string) *circuit {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.circuits[key]; c != nil {
		return c
	}
	if len(b.circuits) >= b.cfg.maxKeys && !b.evictClosed() {
		return nil
	}
	c := &circuit{key: key, win: newWindow(b.cfg.window)}
	b.circuits[key] = c
	return c
}

// evictClosed forgets one closed circuit; b.mu is held.
func (b *Breaker) evictClosed() bool {
	for k, c := range b.circuits {
		c.mu.Lock()
		closed := c.state == Closed
		c.mu.Unlock()
		if closed {
			delete(b.circuits, k)
			return true
		}
	}
	return false
}
