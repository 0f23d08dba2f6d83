package testserver

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	// An instant inside a window (not on an epoch-aligned edge of any common window).
	return &fakeClock{t: time.Unix(1_700_000_000, 300_000_000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// req builds a request from remote address addr with the given headers (name, value pairs).
func req(method, target, addr string, headers ...string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = addr
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

// mustLimiter builds a limiter or panics (test setup only).
func mustLimiter(rules []Rule, opts ...Option) *Limiter {
	l, err := NewLimiter(rules, opts...)
	if err != nil {
		panic(err)
	}
	return l
}
