package testserver

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// DefaultMaxKeys is the default cap on the states a [MemoryStore] tracks.
const DefaultMaxKeys = 100_000

// ErrInvalidCheck is returned by a Store for a malformed [StoreCheck] (N below 1 or no Algorithm).
var ErrInvalidCheck = errors.New("testserver: invalid store check")

const (
	maxMemShards = 64
	// evictScan is how many least-recently-used states eviction inspects looking for an idle one.
	evictScan = 8
)

// MemoryStore is the in-process [Store]: a bounded, sharded map from (scope, key) to algorithm
// state. It tracks at most MaxKeys states; to admit a new key into a full shard it evicts, among
// the few least recently used states of that shard, one that is idle (back at its initial state,
// so forgetting it hands the key nothing it would not already get), and only when none of them is
// idle the least recently used one. Evictions are counted.
//
// A MemoryStore is safe for concurrent use. Each shard has its own lock; Apply locks the shards
// of all its checks in ascending order, so multi-key decisions are atomic and deadlock-free.
// It starts no goroutines.
type MemoryStore struct {
	seed     maphash.Seed
	shards   []memShard
	mask     uint64
	perShard int
	maxKeys  int

	// scopes interns state namespaces: string -> *memScope. It grows only with distinct rule
	// identities (SetRules), not with keys.
	scopes sync.Map

	closed        atomic.Bool
	evictions     atomic.Int64
	evictedActive atomic.Int64
}

// memScope is one state namespace (a rule's quota).
type memScope struct {
	name      string
	rule      string
	alg       algorithm.Algorithm // the base quota, for Idle
	evictions atomic.Int64
}

type memKey struct {
	scope *memScope
	key   string
}

// memEntry is one tracked state, linked into its shard's recency list.
type memEntry struct {
	id         memKey
	state      algorithm.State
	prev, next *memEntry
	pinned     bool
}

type memShard struct {
	mu sync.Mutex
	m  map[memKey]*memEntry
	// lru is the sentinel of a circular list: lru.next is the most recently used entry,
	// lru.prev the least recently used.
	lru memEntry
	_   [64]byte // keep neighbouring shards' locks off one cache line
}

// NewMemoryStore returns an empty MemoryStore tracking at most maxKeys states; maxKeys 0 means
// [DefaultMaxKeys]. A negative maxKeys is an error matching [ErrInvalidOption].
func NewMemoryStore(maxKeys int) (*MemoryStore, error) {
	return newMemoryStore(maxKeys, maxMemShards)
}

// newMemoryStore is NewMemoryStore with at most maxShards shards (tests use one).
func newMemoryStore(maxKeys, maxShards int) (*MemoryStore, error) {
	if maxKeys < 0 {
		return nil, &OptionError{Option: "NewMemoryStore", Value: fmt.Sprint(maxKeys), Err: fmt.Errorf("%w: max keys must not be negative", ErrInvalidOption)}
	}
	if maxKeys == 0 {
		maxKeys = DefaultMaxKeys
	}
	n := 1
	for n*2 <= maxKeys && n*2 <= maxShards {
		n *= 2
	}
	s := &MemoryStore{
		seed:     maphash.MakeSeed(),
		shards:   make([]memShard, n),
		mask:     uint64(n - 1),
		perShard: maxKeys / n,
		maxKeys:  maxKeys,
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.m = map[memKey]*memEntry{}
		sh.lru.next, sh.lru.prev = &sh.lru, &sh.lru
	}
	return s, nil
}

// MaxKeys returns the cap on tracked states. The store never holds more once Apply returns.
func (s *MemoryStore) MaxKeys() int { return s.perShard * len(s.shards) }

func (s *MemoryStore) scope(c *StoreCheck) *memScope {
	if sc, ok := s.scopes.Load(c.Scope); ok {
		return sc.(*memScope)
	}
	alg := c.Publish
	if alg == nil {
		alg = c.Algorithm
	}
	sc, _ := s.scopes.LoadOrStore(c.Scope, &memScope{name: c.Scope, rule: c.Rule, alg: alg})
	return sc.(*memScope)
}

func (s *MemoryStore) shardOf(scope, key string) int {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(scope)
	h.WriteByte(0)
	h.WriteString(key)
	return int(h.Sum64() & s.mask)
}

// Apply implements [Store].
func (s *MemoryStore) Apply(ctx context.Context, now time.Time, checks []StoreCheck) ([]StoreDecision, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range checks {
		if checks[i].N < 1 || checks[i].Algorithm == nil {
			return nil, fmt.Errorf("%w: check %d (rule %q): N=%d, algorithm set: %t", ErrInvalidCheck, i, checks[i].Rule, checks[i].N, checks[i].Algorithm != nil)
		}
	}
	if len(checks) == 0 {
		return nil, nil
	}
	// Small requests (the common case: a few rules) keep their bookkeeping on the stack.
	var (
		idxBuf, orderBuf [8]int
		entryBuf         [8]*memEntry
		shardIdx         = idxBuf[:0]
		order            = orderBuf[:0]
		entries          = entryBuf[:0]
	)
	for i := range checks {
		shardIdx = append(shardIdx, s.shardOf(checks[i].Scope, checks[i].Key))
	}
	order = append(order, shardIdx...)
	slices.Sort(order)
	order = slices.Compact(order)
	for _, i := range order {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for j := len(order) - 1; j >= 0; j-- {
			s.shards[order[j]].mu.Unlock()
		}
	}()

	for i := range checks {
		entries = append(entries, s.entry(&s.shards[shardIdx[i]], s.scope(&checks[i]), checks[i].Key, now))
	}
	out := make([]StoreDecision, len(checks))
	ok := true
	for i := range checks {
		c := &checks[i]
		d := c.Algorithm.Decide(&entries[i].state, now, c.N)
		if d.Allowed && c.MaxDelay > 0 && d.Delay > c.MaxDelay {
			d = algorithm.Decision{Limit: d.Limit, ResetAfter: d.ResetAfter, RetryAfter: d.Delay - c.MaxDelay}
		}
		out[i].Decision = d
		if c.Publish != nil {
			out[i].Published = c.Publish.Decide(&entries[i].state, now, c.N)
		} else {
			out[i].Published = d
		}
		if !d.Allowed && !c.Advisory {
			ok = false
		}
	}
	for i := range checks {
		c := &checks[i]
		if (ok && out[i].Decision.Allowed) || c.CountDenied {
			c.Algorithm.Commit(&entries[i].state, now, c.N)
			out[i].Committed = true
		}
		if c.CountDenied && !out[i].Decision.Allowed {
			// The denial was counted: its Retry-After and Remaining are those of the state that
			// counts it (deciding again cannot admit, the count only grew).
			out[i].Decision = c.Algorithm.Decide(&entries[i].state, now, c.N)
			out[i].Published = out[i].Decision
			if c.Publish != nil {
				out[i].Published = c.Publish.Decide(&entries[i].state, now, c.N)
			}
		}
	}
	for _, e := range entries {
		e.pinned = false
	}
	for _, i := range order {
		sh := &s.shards[i]
		for len(sh.m) > s.perShard && s.evictOne(sh, now) {
		}
	}
	return out, nil
}

// entry returns the pinned, most-recently-used entry for (sc, key), creating it (and evicting to
// make room) when needed. The shard must be locked.
func (s *MemoryStore) entry(sh *memShard, sc *memScope, key string, now time.Time) *memEntry {
	id := memKey{scope: sc, key: key}
	e, ok := sh.m[id]
	if ok {
		e.unlink()
	} else {
		if len(sh.m) >= s.perShard {
			s.evictOne(sh, now)
		}
		e = &memEntry{id: id}
		sh.m[id] = e
	}
	e.pinned = true
	e.prev, e.next = &sh.lru, sh.lru.next
	sh.lru.next.prev = e
	sh.lru.next = e
	return e
}

func (e *memEntry) unlink() {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

// evictOne removes one unpinned entry of sh: the first idle one among the evictScan least
// recently used, else the least recently used. It reports false when every entry is pinned.
func (s *MemoryStore) evictOne(sh *memShard, now time.Time) bool {
	var victim *memEntry
	idle := false
	scanned := 0
	for e := sh.lru.prev; e != &sh.lru && scanned < evictScan; e = e.prev {
		if e.pinned {
			continue
		}
		scanned++
		if victim == nil {
			victim = e
		}
		if e.id.scope.alg.Idle(&e.state, now) {
			victim, idle = e, true
			break
		}
	}
	if victim == nil {
		return false
	}
	if !idle {
		s.evictedActive.Add(1)
	}
	victim.unlink()
	delete(sh.m, victim.id)
	s.evictions.Add(1)
	victim.id.scope.evictions.Add(1)
	return true
}

// Stats implements [Store].
func (s *MemoryStore) Stats() StoreStats {
	st := StoreStats{MaxKeys: s.MaxKeys(), Evictions: s.evictions.Load(), EvictedActive: s.evictedActive.Load()}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.Keys += len(sh.m)
		sh.mu.Unlock()
	}
	s.scopes.Range(func(_, v any) bool {
		sc := v.(*memScope)
		if n := sc.evictions.Load(); n > 0 {
			if st.RuleEvictions == nil {
				st.RuleEvictions = map[string]int64{}
			}
			st.RuleEvictions[sc.rule] += n
		}
		return true
	})
	return st
}

// Close implements [Store]: it drops every state. It is idempotent.
func (s *MemoryStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		clear(sh.m)
		sh.lru.next, sh.lru.prev = &sh.lru, &sh.lru
		sh.mu.Unlock()
	}
	return nil
}
