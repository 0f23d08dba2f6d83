package testserver

import (
	"hash/maphash"
	"maps"
	"math/bits"
	"sync"
	"sync/atomic"
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

// keyCounters are Counters updated atomically, so that decisions record without a lock.
type keyCounters struct {
	allowed, denied, shadowed, elastic, blocked atomic.Int64
}

func (c *keyCounters) count(admitted bool, rr *RuleResult) {
	switch {
	case rr.Shadowed:
		c.shadowed.Add(1)
	case !rr.Allowed:
		c.denied.Add(1)
	case admitted:
		c.allowed.Add(1)
		if rr.Elastic {
			c.elastic.Add(1)
		}
	default:
		c.blocked.Add(1)
	}
}

func (c *keyCounters) load() Counters {
	return Counters{
		Allowed:  c.allowed.Load(),
		Denied:   c.denied.Load(),
		Shadowed: c.shadowed.Load(),
		Elastic:  c.elastic.Load(),
		Blocked:  c.blocked.Load(),
	}
}

// counterStripes is how many copies of a rule's counters its decisions are spread over, picked by
// the top bits of the key's hash (stripe). Counting is an atomic add, and when every core adds to
// one cache line each add first waits for the line to come from the core that added last (50 to
// 100 ns on the 2-core development VM, as much as the rest of a decision). With one copy per
// stripe, each on its own cache line, cores deciding for different keys rarely meet. It equals the
// memory store's most shards, and the store hands over the hash whose top bits pick a key's shard:
// keys of different shards, which take different locks, then never share a stripe either. 64
// stripes cost 4 KiB per rule.
const counterStripes = maxMemShards

// stripe returns the counter stripe of a key of hash h.
func stripe(h uint64) uint64 { return h >> (64 - bits.TrailingZeros(counterStripes)) }

// stripedInt64 is an atomic counter on a cache line of its own.
type stripedInt64 struct {
	atomic.Int64
	_ [56]byte
}

// ruleCounters are a rule's Counters, striped (see counterStripes), and the counters of its keys.
type ruleCounters struct {
	stripes [counterStripes]struct {
		keyCounters
		_ [64 - 5*8]byte
	}
	// keys maps a key to its *keyCounters, for the first keys the table has room for. (A map per
	// rule keyed by the key string hashes much faster than one map keyed by (rule, key) pairs,
	// which Go hashes field by field through their type.)
	keys sync.Map
}

// count counts a decision of key hash h.
func (c *ruleCounters) count(h uint64, admitted bool, rr *RuleResult) {
	c.stripes[stripe(h)].count(admitted, rr)
}

func (c *ruleCounters) load() Counters {
	var sum Counters
	for i := range c.stripes {
		s := c.stripes[i].load()
		sum.Allowed += s.Allowed
		sum.Denied += s.Denied
		sum.Shadowed += s.Shadowed
		sum.Elastic += s.Elastic
		sum.Blocked += s.Blocked
	}
	return sum
}

// statsTable holds the counters. Recording a decision takes no lock: rule counters are reached
// through the compiled rule, key counters through a concurrent map; only adding a rule or one of
// the first maxKeys keys locks.
type statsTable struct {
	mu      sync.Mutex   // serialises additions to rules and keys
	rules   sync.Map     // rule name -> *ruleCounters
	nkeys   atomic.Int64 // keys in all the rules' key maps
	maxKeys int64
	// untracked counts the decisions on keys beyond the first maxKeys (maxKeys > 0), striped as
	// the rule counters are.
	untracked [counterStripes]stripedInt64
}

func newStatsTable(maxKeys int) *statsTable {
	return &statsTable{maxKeys: int64(maxKeys)}
}

// addRule returns the counters of the rule called name, creating them at the first call.
func (t *statsTable) addRule(name string) *ruleCounters {
	if c, ok := t.rules.Load(name); ok {
		return c.(*ruleCounters)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c, _ := t.rules.LoadOrStore(name, &ruleCounters{})
	return c.(*ruleCounters)
}

// statsSeed seeds the hash that picks a decision's counter stripe when the store did not hash its
// key already.
var statsSeed = maphash.MakeSeed()

// stripeHash returns a hash of key whose top bits pick its counter stripe (see stripe).
func stripeHash(key string) uint64 { return maphash.String(statsSeed, key) }

// record counts one rule's part rr of a decision, whose key hashes to h (a uniform hash of rr.Key
// whose top bits pick the counter stripe): in rc, the rule's counters, and in its key's.
func (t *statsTable) record(rc *ruleCounters, h uint64, admitted bool, rr *RuleResult) {
	rc.count(h, admitted, rr)
	if t.maxKeys == 0 {
		// Every decision is untracked: snapshot counts them from the rule counters, which count
		// each decision once, saving an atomic add here.
		return
	}
	if kc, ok := rc.keys.Load(rr.Key); ok {
		kc.(*keyCounters).count(admitted, rr)
		return
	}
	if t.nkeys.Load() >= t.maxKeys {
		// The table is full: only the keys already in it are counted individually.
		t.untracked[stripe(h)].Add(1)
		return
	}
	t.mu.Lock()
	if t.nkeys.Load() >= t.maxKeys {
		t.mu.Unlock()
		t.untracked[stripe(h)].Add(1)
		return
	}
	kc, loaded := rc.keys.LoadOrStore(rr.Key, &keyCounters{})
	if !loaded {
		t.nkeys.Add(1)
	}
	t.mu.Unlock()
	kc.(*keyCounters).count(admitted, rr)
}

func (t *statsTable) snapshot(store StoreStats) Stats {
	s := Stats{Rules: map[string]Counters{}, Store: store}
	for i := range t.untracked {
		s.UntrackedKeys += t.untracked[i].Load()
	}
	t.rules.Range(func(name, c any) bool {
		rule := name.(string)
		rc := c.(*ruleCounters)
		sum := rc.load()
		s.Rules[rule] = sum
		if t.maxKeys == 0 {
			// Every decision was untracked, and each counted one of these (see record).
			s.UntrackedKeys += sum.Allowed + sum.Denied + sum.Shadowed + sum.Blocked
		}
		rc.keys.Range(func(key, kc any) bool {
			if s.Keys == nil {
				s.Keys = map[string]map[string]Counters{}
			}
			km := s.Keys[rule]
			if km == nil {
				km = map[string]Counters{}
				s.Keys[rule] = km
			}
			km[key.(string)] = kc.(*keyCounters).load()
			return true
		})
		return true
	})
	for name, n := range store.RuleEvictions {
		c := s.Rules[name]
		c.Evictions = n
		s.Rules[name] = c
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
