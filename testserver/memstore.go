package testserver

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
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
	// evictScan is how many states of a full shard a new key inspects, from the shard's sweep
	// position on, looking for an idle one to replace. A new key misses an idle state only when all
	// evictScan inspected are busy: with a fraction f of the shard idle that happens with
	// probability (1-f)^evictScan, 0.12% at f = 10% for 64. Its cost, 64 Idle checks (about 1 µs),
	// is paid only by a new key arriving at a full shard.
	evictScan = 64
	// maxScopeScan is how many scopes Apply looks up by scanning a slice (a few string compares,
	// which are pointer compares for the Limiter's own scope strings) before it uses a map.
	maxScopeScan = 8
)

// MemoryStore is the in-process [Store]: a bounded, sharded map from (scope, key) to algorithm
// state.
//
// It tracks at most MaxKeys states and never forgets one that is not idle. A state is idle when it
// is back at its initial state (a full bucket, an empty window), so forgetting it hands its key
// nothing it would not get anyway. A new key arriving at a full shard takes the place of an idle
// state (the shard is swept for one, a bounded number of states per new key); when none is found
// the key is not tracked: it is decided against its rule's overflow state, one state per rule
// (per scope) that every untracked key shares. So a flood of new keys cannot reset the quota of a
// key that is being throttled, and together the untracked keys of a rule get one key's quota. The
// price is that a legitimate new key may be denied while the store is full of busy keys; it gets
// its own state as soon as a state goes idle. See docs/memory-store.md.
//
// A MemoryStore is safe for concurrent use. Each shard has its own lock; Apply locks the shards
// of all its checks in ascending order (then, when a check overflows, the overflow lock), so
// multi-key decisions are atomic and deadlock-free. It starts no goroutines.
type MemoryStore struct {
	seed     maphash.Seed
	shards   []memShard
	shift    uint // 64 - log2(len(shards)): a hash's top bits pick its shard
	perShard int
	// hashBits masks every key hash: all ones, except in tests that force hash collisions.
	hashBits uint64

	// scopes interns state namespaces. It grows only with distinct rule identities (SetRules),
	// not with keys; it is replaced, never modified, under scopesMu.
	scopes   atomic.Pointer[scopeTable]
	scopesMu sync.Mutex

	// overflowMu guards every memScope's overflow state. It is taken after shard locks, never
	// before, and only by decisions on untracked keys.
	overflowMu sync.Mutex

	closed     atomic.Bool
	evictions  atomic.Int64
	overflowed atomic.Int64
}

// scopeTable is an immutable set of scopes.
type scopeTable struct {
	list   []*memScope
	byName map[string]*memScope // nil while len(list) <= maxScopeScan
}

// memScope is one state namespace (a rule's quota).
type memScope struct {
	name       string
	rule       string
	hash       uint64
	alg        algorithm.Algorithm // the base quota, for Idle
	evictions  atomic.Int64
	overflowed atomic.Int64
	// overflow is the state every untracked key of this scope shares (guarded by overflowMu).
	overflow algorithm.State
}

type memKey struct {
	scope *memScope
	key   string
}

// memEntry is one tracked state.
type memEntry struct {
	id    memKey
	hash  uint64 // keyHash(id)
	state algorithm.State
	slot  int // index in the shard's slots
	// pinned marks the entries of the Apply in progress: it does not evict them.
	pinned bool
}

type memShard struct {
	mu sync.Mutex
	// index finds the entries by keyHash (computed once per decision: a map keyed by the
	// (scope, key) pair would hash the key's string again).
	index keyIndex
	// slots holds every entry, for the sweep that looks for idle states; hand is where the next
	// sweep starts.
	slots []*memEntry
	hand  int
	_     [64]byte // keep neighbouring shards' locks off one cache line
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
		shift:    uint(64 - bits.TrailingZeros(uint(n))),
		perShard: maxKeys / n,
		hashBits: ^uint64(0),
	}
	s.scopes.Store(&scopeTable{})
	return s, nil
}

// MaxKeys returns the cap on tracked states. The store never holds more.
func (s *MemoryStore) MaxKeys() int { return s.perShard * len(s.shards) }

// scope returns the scope c.Scope names, creating it at its first check.
func (s *MemoryStore) scope(c *StoreCheck) *memScope {
	t := s.scopes.Load()
	if t.byName != nil {
		if sc, ok := t.byName[c.Scope]; ok {
			return sc
		}
	} else {
		for _, sc := range t.list {
			if sc.name == c.Scope {
				return sc
			}
		}
	}
	return s.addScope(c)
}

func (s *MemoryStore) addScope(c *StoreCheck) *memScope {
	s.scopesMu.Lock()
	defer s.scopesMu.Unlock()
	t := s.scopes.Load()
	for _, sc := range t.list {
		if sc.name == c.Scope {
			return sc
		}
	}
	alg := c.Publish
	if alg == nil {
		alg = c.Algorithm
	}
	sc := &memScope{name: c.Scope, rule: c.Rule, alg: alg, hash: maphash.String(s.seed, c.Scope)}
	nt := &scopeTable{list: append(slices.Clip(t.list), sc)}
	if len(nt.list) > maxScopeScan {
		nt.byName = make(map[string]*memScope, len(nt.list))
		for _, x := range nt.list {
			nt.byName[x.name] = x
		}
	}
	s.scopes.Store(nt)
	return sc
}

// keyHash returns the hash of a key in scope sc from the key's maphash h; its top bits pick the
// key's shard.
func (s *MemoryStore) keyHash(sc *memScope, h uint64) uint64 {
	// A multiplicative mix of the key's hash and the scope's spreads (scope, key) pairs over the
	// shards by the product's top bits.
	return (h ^ sc.hash) * 0x9e3779b97f4a7c15 & s.hashBits
}

// shardOf returns the shard of a key of hash h.
func (s *MemoryStore) shardOf(h uint64) *memShard { return &s.shards[h>>s.shift] }

// Apply implements [Store].
func (s *MemoryStore) Apply(ctx context.Context, now time.Time, checks []StoreCheck) ([]StoreDecision, error) {
	return s.AppendApply(ctx, nil, now, checks)
}

// AppendApply is [MemoryStore.Apply] appending the decisions to dst (which may be nil) and
// returning the extended slice; with a dst of enough capacity it allocates nothing. It is safe
// for concurrent use.
func (s *MemoryStore) AppendApply(ctx context.Context, dst []StoreDecision, now time.Time, checks []StoreCheck) ([]StoreDecision, error) {
	if s.closed.Load() {
		return dst, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	for i := range checks {
		if checks[i].N < 1 || checks[i].Algorithm == nil {
			return dst, fmt.Errorf("%w: check %d (rule %q): N=%d, algorithm set: %t", ErrInvalidCheck, i, checks[i].Rule, checks[i].N, checks[i].Algorithm != nil)
		}
	}
	if len(checks) == 0 {
		return dst, nil
	}
	if len(checks) == 1 {
		sc := s.scope(&checks[0])
		dst = append(dst, StoreDecision{})
		applyOne(s, sc, s.keyHash(sc, maphash.String(s.seed, checks[0].Key)), checks[0].Key, &checks[0], now, &dst[len(dst)-1])
		return dst, nil
	}
	// Small requests (the common case: a few rules) keep their bookkeeping on the stack.
	var (
		idxBuf, orderBuf [8]int
		hashBuf          [8]uint64
		scopeBuf         [8]*memScope
		stateBuf         [8]*algorithm.State
		entryBuf         [8]*memEntry
		shardIdx         = idxBuf[:0]
		hashes           = hashBuf[:0]
		order            = orderBuf[:0]
		scopes           = scopeBuf[:0]
		states           = stateBuf[:0]
		entries          = entryBuf[:0]
	)
	for i := range checks {
		sc := s.scope(&checks[i])
		scopes = append(scopes, sc)
		h := s.keyHash(sc, maphash.String(s.seed, checks[i].Key))
		hashes = append(hashes, h)
		shardIdx = append(shardIdx, int(h>>s.shift))
	}
	order = append(order, shardIdx...)
	if len(order) > 1 {
		slices.Sort(order)
		order = slices.Compact(order)
	}
	for _, i := range order {
		s.shards[i].mu.Lock()
	}
	overflow := false
	for i := range checks {
		e := entry(s, &s.shards[shardIdx[i]], scopes[i], hashes[i], checks[i].Key, now)
		entries = append(entries, e)
		if e != nil {
			states = append(states, &e.state)
			continue
		}
		if !overflow {
			s.overflowMu.Lock()
			overflow = true
		}
		states = append(states, &scopes[i].overflow)
		scopes[i].overflowed.Add(1)
		s.overflowed.Add(1)
	}

	base := len(dst)
	dst = slices.Grow(dst, len(checks))[:base+len(checks)]
	out := dst[base:]
	ok := true
	for i := range checks {
		c := &checks[i]
		d := c.Algorithm.Decide(states[i], now, c.N)
		if d.Allowed && c.MaxDelay > 0 && d.Delay > c.MaxDelay {
			d = algorithm.Decision{Limit: d.Limit, ResetAfter: d.ResetAfter, RetryAfter: d.Delay - c.MaxDelay}
		}
		out[i] = StoreDecision{Decision: d, Published: d}
		if c.Publish != nil {
			out[i].Published = c.Publish.Decide(states[i], now, c.N)
		}
		if !d.Allowed && !c.Advisory {
			ok = false
		}
	}
	for i := range checks {
		c := &checks[i]
		if (ok && out[i].Decision.Allowed) || c.CountDenied {
			c.Algorithm.Commit(states[i], now, c.N)
			out[i].Committed = true
		}
		if c.CountDenied && !out[i].Decision.Allowed {
			// The denial was counted: its Retry-After and Remaining are those of the state that
			// counts it (deciding again cannot admit, the count only grew).
			out[i].Decision = c.Algorithm.Decide(states[i], now, c.N)
			out[i].Published = out[i].Decision
			if c.Publish != nil {
				out[i].Published = c.Publish.Decide(states[i], now, c.N)
			}
		}
	}
	for _, e := range entries {
		if e != nil {
			e.pinned = false
		}
	}
	if overflow {
		s.overflowMu.Unlock()
	}
	for j := len(order) - 1; j >= 0; j-- {
		s.shards[order[j]].mu.Unlock()
	}
	return dst, nil
}

// applyKey is Apply of the one check c for key, given as a string or as bytes, in the scope sc
// that c.Scope names (algSet.memScope); c.Key is ignored. The caller (the Limiter) has checked the
// context and built a valid check. It sets c.Key to the store's copy of the key, which a key given
// as bytes allocates only when the key is new, and allocates nothing else. It returns the key's
// hash (keyHash), whose top bits pick its shard, for the Limiter to pick a counter stripe.
func applyKey[K string | []byte](s *MemoryStore, now time.Time, sc *memScope, c *StoreCheck, key K, out *StoreDecision) (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	var h uint64
	switch k := any(key).(type) {
	case string:
		h = maphash.String(s.seed, k)
	case []byte:
		h = maphash.Bytes(s.seed, k)
	}
	h = s.keyHash(sc, h)
	c.Key = applyOne(s, sc, h, key, c, now, out)
	return h, nil
}

// applyOne decides the valid check c alone, for key of hash h (c.Key is not read) in scope sc,
// into out. It returns the key as a string the store holds (so a key given as bytes costs an
// allocation only when it is new).
func applyOne[K string | []byte](s *MemoryStore, sc *memScope, h uint64, key K, c *StoreCheck, now time.Time, out *StoreDecision) string {
	sh := s.shardOf(h)
	sh.mu.Lock()
	e := entry(s, sh, sc, h, key, now)
	var (
		st    *algorithm.State
		their string
	)
	if e != nil {
		st, their = &e.state, e.id.key
	} else {
		their = string(key)
		s.overflowMu.Lock()
		st = &sc.overflow
		sc.overflowed.Add(1)
		s.overflowed.Add(1)
	}
	d := &out.Decision
	if c.Publish == nil && c.MaxDelay <= 0 && !c.CountDenied {
		// Nothing to decide between Decide and Commit: one pass over the state.
		algorithm.Take(c.Algorithm, st, now, c.N, d)
		release(s, sh, e)
		// Copied after the unlock, whose atomic instruction has written the Decision's fields to
		// the cache: a copy while they were still in flight would stall (see algorithm.Take).
		out.Published, out.Committed = *d, d.Allowed
		return their
	}
	*d = c.Algorithm.Decide(st, now, c.N)
	if d.Allowed && c.MaxDelay > 0 && d.Delay > c.MaxDelay {
		*d = algorithm.Decision{Limit: d.Limit, ResetAfter: d.ResetAfter, RetryAfter: d.Delay - c.MaxDelay}
	}
	if c.Publish != nil {
		out.Published = c.Publish.Decide(st, now, c.N)
	} else {
		out.Published = *d
	}
	out.Committed = d.Allowed || c.CountDenied
	if out.Committed {
		c.Algorithm.Commit(st, now, c.N)
	}
	if c.CountDenied && !d.Allowed {
		// The denial was counted: its Retry-After and Remaining are those of the state that
		// counts it (see AppendApply).
		*d = c.Algorithm.Decide(st, now, c.N)
		out.Published = *d
		if c.Publish != nil {
			out.Published = c.Publish.Decide(st, now, c.N)
		}
	}
	release(s, sh, e)
	return their
}

// release unlocks what applyOne locked for entry e of shard sh (nil: the overflow state).
func release(s *MemoryStore, sh *memShard, e *memEntry) {
	if e != nil {
		e.pinned = false
	} else {
		s.overflowMu.Unlock()
	}
	sh.mu.Unlock()
}

// entry returns the pinned entry for key (of hash h) in scope sc, creating it when the shard has
// room or an idle state to replace; it returns nil when the key cannot be tracked (the shard is
// full of busy or pinned states). The shard must be locked.
func entry[K string | []byte](s *MemoryStore, sh *memShard, sc *memScope, h uint64, key K, now time.Time) *memEntry {
	if slots := sh.index.slots; len(slots) > 0 {
		mask := sh.index.mask()
		for i := h & mask; slots[i].entry != nil; i = (i + 1) & mask {
			if e := slots[i].entry; slots[i].hash == h && e.id.scope == sc && e.id.key == string(key) {
				e.pinned = true
				return e
			}
		}
	}
	var e *memEntry
	id := memKey{scope: sc, key: string(key)}
	if len(sh.slots) < s.perShard {
		e = &memEntry{id: id, hash: h, slot: len(sh.slots)}
		sh.slots = append(sh.slots, e)
	} else {
		victim := s.idleSlot(sh, now)
		if victim == nil {
			return nil
		}
		sh.index.remove(victim)
		s.evictions.Add(1)
		victim.id.scope.evictions.Add(1)
		// The victim's place and memory go to the new key.
		*victim = memEntry{id: id, hash: h, slot: victim.slot}
		e = victim
	}
	sh.index.insert(e)
	e.pinned = true
	return e
}

// idleSlot sweeps at most evictScan entries of the full shard sh from its hand on and returns the
// first unpinned idle one, or nil.
func (s *MemoryStore) idleSlot(sh *memShard, now time.Time) *memEntry {
	n := len(sh.slots)
	if n == 0 {
		return nil
	}
	for range min(evictScan, n) {
		e := sh.slots[sh.hand]
		sh.hand++
		if sh.hand == n {
			sh.hand = 0
		}
		if !e.pinned && e.id.scope.alg.Idle(&e.state, now) {
			return e
		}
	}
	return nil
}

// Stats implements [Store].
func (s *MemoryStore) Stats() StoreStats {
	st := StoreStats{
		MaxKeys:    s.MaxKeys(),
		Evictions:  s.evictions.Load(),
		Overflowed: s.overflowed.Load(),
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.Keys += len(sh.slots)
		sh.mu.Unlock()
	}
	for _, sc := range s.scopes.Load().list {
		if n := sc.evictions.Load(); n > 0 {
			if st.RuleEvictions == nil {
				st.RuleEvictions = map[string]int64{}
			}
			st.RuleEvictions[sc.rule] += n
		}
		if n := sc.overflowed.Load(); n > 0 {
			if st.RuleOverflowed == nil {
				st.RuleOverflowed = map[string]int64{}
			}
			st.RuleOverflowed[sc.rule] += n
		}
	}
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
		sh.index.reset()
		clear(sh.slots)
		sh.slots = nil
		sh.mu.Unlock()
	}
	return nil
}
