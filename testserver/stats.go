package testserver

import (
	"maps"
	"sync"
)

// Counters counts a rule's (or one key's) decisions.
type Counters struct {
	// Allowed counts admitted requests that passed the limit (including elastic admissions).
	Allowed int64 `json:"allowed"`
	// Denied counts requests this rule denied.
	Denied int64 `json:"denied"`
	// Shadowed counts requests a shadow-mode rule would have denied but admitted.
	Shadowed int64 `json:"shadowed"`
	// Elastic counts admissions above the limit by an elastic rule (a subset of Allowed).
	Elastic int64 `json:"elastic,omitempty"`
	// Blocked counts requests this rule admitted but another rule denied (nothing was consumed).
	Blocked int64 `json:"blocked,omitempty"`
	// Evictions counts the rule's key states evicted from the store (rules only).
	Evictions int64 `json:"evictions"`
	// Overflowed counts the rule's decisions on keys the store could not track, made on the
	// rule's shared overflow state (rules only; see StoreStats.Overflowed).
	Overflowed int64 `json:"overflowed,omitempty"`
}

// Stats is a snapshot of a limiter's counters. Its JSON form is what /-/stats serves.
type Stats struct {
	// Rules holds the counters of every rule the limiter has had, by name.
	Rules map[string]Counters `json:"rules"`
	// Keys holds per-key counters by rule name and key, for the first WithStatsKeys keys seen.
	Keys map[string]map[string]Counters `json:"keys,omitempty"`
	// UntrackedKeys counts decisions on keys beyond the per-key table's capacity.
	UntrackedKeys int64 `json:"untracked_keys"`
	// Store reports the store's size and evictions.
	Store StoreStats `json:"store"`
	// InFlight is the number of requests inside handlers wrapped by the limiter's middleware.
	InFlight int64 `json:"in_flight"`
	// Server holds the Server's own counters; nil for a bare Limiter.
	Server *ServerStats `json:"server,omitempty"`
}

// statsTable holds the counters; one mutex is enough for a test server's request rates.
type statsTable struct {
	mu        sync.Mutex
	rules     map[string]*Counters
	keys      map[string]map[string]*Counters
	nkeys     int
	maxKeys   int
	untracked int64
}

func newStatsTable(maxKeys int) *statsTable {
	return &statsTable{rules: map[string]*Counters{}, keys: map[string]map[string]*Counters{}, maxKeys: maxKeys}
}

func (t *statsTable) addRule(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.rules[name]; !ok {
		t.rules[name] = &Counters{}
	}
}

func (c *Counters) count(admitted bool, rr *RuleResult) {
	switch {
	case rr.Shadowed:
		c.Shadowed++
	case !rr.Allowed:
		c.Denied++
	case admitted:
		c.Allowed++
		if rr.Elastic {
			c.Elastic++
		}
	default:
		c.Blocked++
	}
}

func (t *statsTable) record(res *Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range res.Rules {
		rr := &res.Rules[i]
		rc, ok := t.rules[rr.Rule]
		if !ok {
			rc = &Counters{}
			t.rules[rr.Rule] = rc
		}
		rc.count(res.Allowed, rr)
		km := t.keys[rr.Rule]
		kc, ok := km[rr.Key]
		if !ok {
			if t.nkeys >= t.maxKeys {
				t.untracked++
				continue
			}
			if km == nil {
				km = map[string]*Counters{}
				t.keys[rr.Rule] = km
			}
			kc = &Counters{}
			km[rr.Key] = kc
			t.nkeys++
		}
		kc.count(res.Allowed, rr)
	}
}

func (t *statsTable) snapshot(store StoreStats) Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Stats{Rules: make(map[string]Counters, len(t.rules)), UntrackedKeys: t.untracked, Store: store}
	for name, c := range t.rules {
		s.Rules[name] = *c
	}
	for name, n := range store.RuleEvictions {
		c := s.Rules[name]
		c.Evictions = n
		s.Rules[name] = c
	}
	if len(t.keys) > 0 {
		s.Keys = make(map[string]map[string]Counters, len(t.keys))
		for rule, km := range t.keys {
			out := make(map[string]Counters, len(km))
			for k, c := range km {
				out[k] = *c
			}
			s.Keys[rule] = out
		}
	}
	for name, n := range store.RuleOverflowed {
		c := s.Rules[name]
		c.Overflowed = n
		s.Rules[name] = c
	}
	s.Store.RuleEvictions = maps.Clone(store.RuleEvictions)
	s.Store.RuleOverflowed = maps.Clone(store.RuleOverflowed)
	return s
}

// Stats returns a snapshot of the limiter's counters. Safe for concurrent use.
func (l *Limiter) Stats() Stats {
	s := l.stats.snapshot(l.store.Stats())
	s.InFlight = l.inFlight.Load()
	return s
}
