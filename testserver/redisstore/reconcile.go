package redisstore

import (
	"sync"

	"github.com/steadyhttp/steady/testserver"
)

// ledger holds the Fallback policy's local admissions that Redis has not been told of yet, one
// debt per state (scope and key), so that the next round trip that reaches Redis charges them to
// the shared state: an admission made locally while Redis was away is not handed out a second
// time when it answers again. Safe for concurrent use.
type ledger struct {
	mu      sync.Mutex
	max     int // most debts kept; admissions on further states are dropped (counted)
	debts   map[string]*debt
	owed    int64 // requests in debts
	dropped int64 // requests that could not be kept
	charged int64 // requests charged to Redis
}

// debt is the requests one state owes Redis: the check (its full, unshared algorithm) with N the
// sum of the local admissions.
type debt struct {
	check testserver.StoreCheck
	p     check
}

// owe records n local admissions of c (whose parameters are p).
func (l *ledger) owe(c *testserver.StoreCheck, p check) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := c.Scope + "\x00" + c.Key
	if d, ok := l.debts[id]; ok {
		d.check.N += c.N
		l.owed += c.N
		return
	}
	if len(l.debts) >= l.max {
		l.dropped += c.N
		return
	}
	if l.debts == nil {
		l.debts = map[string]*debt{}
	}
	dc := *c
	dc.Publish, dc.Advisory, dc.MaxDelay = nil, false, 0
	p.hasPub = false
	l.debts[id] = &debt{check: dc, p: p}
	l.owed += c.N
}

// take removes and returns every debt.
func (l *ledger) take() []*debt {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.debts) == 0 {
		return nil
	}
	out := make([]*debt, 0, len(l.debts))
	for _, d := range l.debts {
		out = append(out, d)
	}
	l.debts = nil
	l.owed = 0
	return out
}

// settle records the outcome of a round trip that carried ds: charged when it reached Redis,
// owed again otherwise.
func (l *ledger) settle(ds []*debt, charged bool) {
	if len(ds) == 0 {
		return
	}
	if charged {
		var n int64
		for _, d := range ds {
			n += d.check.N
		}
		l.mu.Lock()
		l.charged += n
		l.mu.Unlock()
		return
	}
	for _, d := range ds {
		l.owe(&d.check, d.p)
	}
}

// counts returns the requests charged so far and those not charged (owed, or dropped).
func (l *ledger) counts() (charged, uncharged int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.charged, l.owed + l.dropped
}

// debtCalls turns debts into script calls that charge them (at Redis's time: a debt charged late
// weighs on the state for at least as long as it would have).
func (s *Store) debtCalls(ds []*debt) []*call {
	calls := make([]*call, 0, len(ds))
	for _, d := range ds {
		c, err := s.encode([]testserver.StoreCheck{d.check}, []check{d.p}, "", true)
		if err != nil {
			continue // encoded once already; cannot fail
		}
		calls = append(calls, c)
	}
	return calls
}
