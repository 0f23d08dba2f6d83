package testserver

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustAlg(t testing.TB, name string, limit int64, window time.Duration) algorithm.Algorithm {
	t.Helper()
	a, err := algorithm.New(name, algorithm.Config{Limit: limit, Window: window})
	require.NoError(t, err)
	return a
}

func check(a algorithm.Algorithm, scope, key string) StoreCheck {
	return StoreCheck{Rule: scope, Scope: scope, Key: key, N: 1, Algorithm: a}
}

func TestMemoryStoreAllOrNothing(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	loose := mustAlg(t, "token-bucket", 10, time.Hour)
	tight := mustAlg(t, "token-bucket", 1, time.Hour)
	s, err := NewMemoryStore(0)
	require.NoError(t, err)
	defer s.Close()

	both := []StoreCheck{check(loose, "loose", "k"), check(tight, "tight", "k")}
	d, err := s.Apply(ctx, now, both)
	require.NoError(t, err)
	assert.True(t, d[0].Committed && d[1].Committed)

	// tight now denies: loose must not be charged.
	for range 5 {
		d, err = s.Apply(ctx, now, both)
		require.NoError(t, err)
		assert.True(t, d[0].Decision.Allowed)
		assert.False(t, d[1].Decision.Allowed)
		assert.False(t, d[0].Committed || d[1].Committed)
	}
	d, err = s.Apply(ctx, now, []StoreCheck{check(loose, "loose", "k")})
	require.NoError(t, err)
	assert.Equal(t, int64(8), d[0].Decision.Remaining, "loose was charged only by the admitted request")

	// An advisory denial blocks nothing and is not committed.
	adv := check(tight, "tight", "k")
	adv.Advisory = true
	d, err = s.Apply(ctx, now, []StoreCheck{check(loose, "loose", "k"), adv})
	require.NoError(t, err)
	assert.True(t, d[0].Committed)
	assert.False(t, d[1].Committed)
	assert.False(t, d[1].Decision.Allowed)
}

func TestMemoryStoreErrors(t *testing.T) {
	s, err := NewMemoryStore(10)
	require.NoError(t, err)
	a := mustAlg(t, "fixed-window", 1, time.Second)
	_, err = s.Apply(context.Background(), time.Now(), []StoreCheck{{Scope: "s", Key: "k", N: 0, Algorithm: a}})
	assert.ErrorIs(t, err, ErrInvalidCheck)
	_, err = s.Apply(context.Background(), time.Now(), []StoreCheck{{Scope: "s", Key: "k", N: 1}})
	assert.ErrorIs(t, err, ErrInvalidCheck)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Apply(ctx, time.Now(), []StoreCheck{check(a, "s", "k")})
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Apply(context.Background(), time.Now(), []StoreCheck{check(a, "s", "k")})
	assert.ErrorIs(t, err, ErrClosed)
	_, err = NewMemoryStore(-1)
	assert.ErrorIs(t, err, ErrInvalidOption)
}

func TestMemoryStoreEvictsOnlyIdle(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1_700_000_000, 0)
	a := mustAlg(t, "token-bucket", 1, time.Minute)
	s, err := newMemoryStore(3, 1)
	require.NoError(t, err)
	defer s.Close()
	apply := func(now time.Time, key string) StoreDecision {
		t.Helper()
		d, err := s.Apply(ctx, now, []StoreCheck{check(a, "r", key)})
		require.NoError(t, err)
		return d[0]
	}
	apply(t0, "throttled-old")            // busy until t0+1m
	apply(t0.Add(-2*time.Minute), "idle") // used long ago: idle at t0
	apply(t0, "throttled-new")
	require.Equal(t, 3, s.Stats().Keys)

	assert.True(t, apply(t0, "newcomer").Decision.Allowed)
	st := s.Stats()
	assert.Equal(t, 3, st.Keys)
	assert.Equal(t, int64(1), st.Evictions, "the idle key made room")
	assert.Zero(t, st.Overflowed)
	assert.False(t, apply(t0, "throttled-old").Decision.Allowed, "a throttled key keeps its state")

	// Now every key is busy: newcomers are not tracked and share the rule's overflow state (one
	// key's quota, 1 per minute); no busy key is evicted.
	assert.True(t, apply(t0, "another").Decision.Allowed, "the overflow state's first request")
	assert.False(t, apply(t0, "yet-another").Decision.Allowed, "the overflow state is spent")
	assert.False(t, apply(t0, "another").Decision.Allowed, "an untracked key stays on the overflow state")
	st = s.Stats()
	assert.Equal(t, int64(1), st.Evictions)
	assert.Zero(t, st.EvictedActive)
	assert.Equal(t, int64(3), st.Overflowed)
	assert.Equal(t, map[string]int64{"r": 3}, st.RuleOverflowed)
	assert.Equal(t, map[string]int64{"r": 1}, st.RuleEvictions)
	assert.Equal(t, 3, st.Keys)
	for _, k := range []string{"throttled-old", "throttled-new", "newcomer"} {
		assert.False(t, apply(t0, k).Decision.Allowed, "%s is still throttled", k)
	}

	// A minute later every state is idle again: a newcomer gets its own state.
	t1 := t0.Add(time.Minute)
	assert.True(t, apply(t1, "later").Decision.Allowed)
	assert.True(t, apply(t1, "another").Decision.Allowed, "tracked now, with its own quota")
	st = s.Stats()
	assert.Equal(t, int64(3), st.Evictions)
	assert.Equal(t, int64(3), st.Overflowed)
}

func TestMemoryStoreCapWithPinnedKeys(t *testing.T) {
	// One shard of one key, and a request that needs three keys in it: the request is decided on
	// all three, two of them on their rules' overflow states, and the store never exceeds its cap.
	s, err := newMemoryStore(1, 1)
	require.NoError(t, err)
	defer s.Close()
	a := mustAlg(t, "fixed-window", 5, time.Minute)
	d, err := s.Apply(context.Background(), time.Unix(1e9, 0), []StoreCheck{check(a, "x", "1"), check(a, "y", "1"), check(a, "z", "1")})
	require.NoError(t, err)
	for _, x := range d {
		assert.True(t, x.Committed)
	}
	st := s.Stats()
	assert.Equal(t, 1, st.Keys)
	assert.Equal(t, int64(2), st.Overflowed)
	assert.Equal(t, map[string]int64{"y": 1, "z": 1}, st.RuleOverflowed)
}

func TestMemoryStoreOneKeyManyGoroutines(t *testing.T) {
	for _, name := range algorithm.Names() {
		t.Run(name, func(t *testing.T) {
			s, err := NewMemoryStore(0)
			require.NoError(t, err)
			defer s.Close()
			a := mustAlg(t, name, 100, time.Hour)
			now := time.Unix(1_700_000_000, 0)
			var admitted atomic.Int64
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for range 10 {
						d, err := s.Apply(context.Background(), now, []StoreCheck{check(a, "r", "k")})
						if err == nil && d[0].Committed {
							admitted.Add(1)
						}
					}
				})
			}
			wg.Wait()
			assert.Equal(t, int64(100), admitted.Load())
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestKeyFlood sends 1,000,000 requests from distinct client addresses through a limiter with the
// default cap (100,000 keys): the store never exceeds the cap, memory stops growing once the cap
// is reached, and the bytes per key are reported. Every tracked key is busy (one of its 10 tokens
// per minute spent) so none is evicted: the keys beyond the cap share the rule's overflow state,
// which admits one key's quota.
func TestKeyFlood(t *testing.T) {
	const total = 1_000_000
	now := time.Unix(1_700_000_000, 0)
	l := mustLimiter([]Rule{{Name: "per-ip", Key: KeyIP, Algorithm: "token-bucket", Limit: 10, Window: time.Minute}},
		WithClock(func() time.Time { return now }), WithStatsKeys(0))
	defer l.Close()
	r := req("GET", "/", "")
	addr := func(i int) string {
		return "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255) + ":1"
	}
	before := heapInUse()
	var atCap uint64
	admitted := 0
	for i := range total {
		r.RemoteAddr = addr(i)
		res, err := l.Decide(r)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if res.Allowed {
			admitted++
		}
		if i+1 == DefaultMaxKeys {
			atCap = heapInUse()
			st := l.Stats().Store
			t.Logf("memory store: %d keys in %d bytes: %.0f bytes per key", st.Keys, atCap-before, float64(atCap-before)/float64(st.Keys))
		}
		if i%100_000 == 99_999 {
			if keys := l.Stats().Store.Keys; keys > DefaultMaxKeys {
				t.Fatalf("after %d keys the store holds %d > cap %d", i+1, keys, DefaultMaxKeys)
			}
		}
	}
	after := heapInUse()
	st := l.Stats()
	t.Logf("after %d distinct keys: %d tracked, %d evictions, %d overflowed, heap %d -> %d bytes",
		total, st.Store.Keys, st.Store.Evictions, st.Store.Overflowed, atCap-before, after-before)
	assert.LessOrEqual(t, st.Store.Keys, DefaultMaxKeys)
	assert.Zero(t, st.Store.Evictions, "no busy key is evicted")
	assert.Equal(t, int64(total-st.Store.Keys), st.Store.Overflowed)
	assert.Equal(t, st.Store.Overflowed, st.Rules["per-ip"].Overflowed)
	assert.Equal(t, st.Store.Keys+10, admitted, "each tracked key once, the overflow state its 10")
	assert.Less(t, after, before+atCap-before+(atCap-before)/2, "memory keeps growing past the cap")
}

// TestMemoryStoreHashCollisions forces every key into one of four hashes, so that entries share
// probe sequences, and checks that each key still has its own state, through eviction too.
func TestMemoryStoreHashCollisions(t *testing.T) {
	ctx := context.Background()
	s, err := newMemoryStore(50, 1)
	require.NoError(t, err)
	defer s.Close()
	s.hashBits = 3
	a := mustAlg(t, "fixed-window", 2, time.Minute)
	t0 := time.Unix(1_700_000_000, 0).Truncate(time.Minute)
	round := func(now time.Time, prefix string, keys int) {
		t.Helper()
		for i := range keys {
			k := prefix + strconv.Itoa(i)
			for n := range 3 {
				d, err := s.Apply(ctx, now, []StoreCheck{check(a, "r", k)})
				require.NoError(t, err)
				require.Equal(t, n < 2, d[0].Decision.Allowed, "key %s, request %d", k, n+1)
			}
		}
	}
	round(t0, "a", 40)
	assert.Equal(t, 40, s.Stats().Keys)
	// A minute later every state is idle: 40 new keys take the 10 free places and replace 30 idle
	// states, removing them from the index.
	round(t0.Add(time.Minute), "b", 40)
	st := s.Stats()
	assert.Equal(t, 50, st.Keys)
	assert.Equal(t, int64(30), st.Evictions)
	assert.Zero(t, st.Overflowed)
	x := &s.shards[0].index
	assert.Equal(t, 50, x.n)
	for _, e := range s.shards[0].slots {
		assert.LessOrEqual(t, e.hash, uint64(3))
		assert.Equal(t, 1, indexFinds(x, e), "every tracked entry is reachable through the index, once")
	}
}

// TestMemoryStoreConcurrentFlood floods a small store from many goroutines with new keys, each
// asked about once: each tracked key admits its request, and all the untracked ones together
// exactly the overflow state's quota.
func TestMemoryStoreConcurrentFlood(t *testing.T) {
	const (
		workers = 8
		perW    = 200
		limit   = 3
	)
	s, err := NewMemoryStore(64)
	require.NoError(t, err)
	defer s.Close()
	a := mustAlg(t, "fixed-window", limit, time.Hour)
	now := time.Unix(1_700_000_000, 0)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perW {
				d, err := s.Apply(context.Background(), now, []StoreCheck{check(a, "r", strconv.Itoa(w)+"/"+strconv.Itoa(i))})
				if err == nil && d[0].Committed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	assert.Equal(t, int64(st.Keys+limit), admitted.Load())
	assert.Equal(t, int64(workers*perW-st.Keys), st.Overflowed)
	assert.Zero(t, st.Evictions)
}
