package testserver

import (
	"net/http"
	"sync"
	"time"
)

// Arrival records one request the Server decided.
type Arrival struct {
	// Time is when the request was decided (the server's clock).
	Time time.Time
	// Method and Path are the request's.
	Method, Path string
	// RemoteAddr is the connection's remote address.
	RemoteAddr string
	// Keys are the request's keys, one per matching rule.
	Keys []string
	// Allowed reports whether the request was admitted.
	Allowed bool
	// Shadowed reports whether a shadow rule would have denied it.
	Shadowed bool
	// RetryAfter is the advertised wait of a throttled request.
	RetryAfter time.Duration
	// Delay is the shaping hold of an admitted request.
	Delay time.Duration
}

// arrivalLog is a bounded ring of arrivals; safe for concurrent use.
type arrivalLog struct {
	mu    sync.Mutex
	buf   []Arrival
	next  int
	full  bool
	total int64
}

func newArrivalLog(n int) *arrivalLog { return &arrivalLog{buf: make([]Arrival, n)} }

func (a *arrivalLog) add(now time.Time, r *http.Request, res *Result) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total++
	if len(a.buf) == 0 {
		return
	}
	e := Arrival{Time: now, Method: r.Method, RemoteAddr: r.RemoteAddr, Allowed: res.Allowed,
		Shadowed: res.Shadowed, RetryAfter: res.RetryAfter, Delay: res.Delay}
	if r.URL != nil {
		e.Path = r.URL.Path
	}
	for _, rr := range res.Rules {
		e.Keys = append(e.Keys, rr.Key)
	}
	a.buf[a.next] = e
	a.next++
	if a.next == len(a.buf) {
		a.next, a.full = 0, true
	}
}

// snapshot returns the remembered arrivals, oldest first.
func (a *arrivalLog) snapshot() []Arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.full {
		return append([]Arrival(nil), a.buf[:a.next]...)
	}
	out := make([]Arrival, 0, len(a.buf))
	out = append(out, a.buf[a.next:]...)
	return append(out, a.buf[:a.next]...)
}

func (a *arrivalLog) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.buf)
	a.next, a.full = 0, false
}
