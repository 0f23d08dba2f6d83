package memory

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/steadyhttp/steady/testserver"
	"github.com/throttled/throttled/v2"
	throttledstore "github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ululestore "github.com/ulule/limiter/v3/drivers/store/memory"
)

// numKeys is the number of keys every store holds before a benchmark starts: steady's default cap.
const numKeys = testserver.DefaultMaxKeys

// take decides one request for key and reports whether it is admitted.
type take func(ctx context.Context, key string) (bool, error)

// impl is one limiter under test, configured so that every decision admits (as the peers' own
// benchmarks do): the quota is far above what a benchmark can ask for.
type impl struct {
	name string
	make func(b *testing.B) (take, func())
}

func impls() []impl {
	steady := func(alg string, limit int64, window time.Duration) impl {
		return impl{"steady-" + alg, func(b *testing.B) (take, func()) {
			l, err := testserver.NewLimiter([]testserver.Rule{{Name: "r", Algorithm: alg, Limit: limit, Window: window}},
				testserver.WithStatsKeys(0))
			if err != nil {
				b.Fatal(err)
			}
			return func(ctx context.Context, key string) (bool, error) {
				rr, err := l.DecideKey(ctx, "r", key)
				return rr.Allowed, err
			}, func() { l.Close() }
		}}
	}
	return []impl{
		steady("token-bucket", 1<<40, time.Second),
		steady("leaky-bucket", 1<<40, time.Second),
		steady("fixed-window", 1<<40, time.Second),
		steady("sliding-window", 1<<40, time.Second),
		// The sliding log keeps one entry per admission instant in its window: 2^14 per
		// millisecond (16 million a second, above any rate reached here) admits every decision
		// and holds a millisecond of them, at most 256 KB a key, as testserver's own benchmark
		// does (a second's worth would be millions of entries, growing through the first second).
		steady("sliding-log", 1<<14, time.Millisecond),
		{"sethvargo", func(b *testing.B) (take, func()) {
			s, err := memorystore.New(&memorystore.Config{Tokens: math.MaxUint64, Interval: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			return func(ctx context.Context, key string) (bool, error) {
				_, _, _, ok, err := s.Take(ctx, key)
				return ok, err
			}, func() { _ = s.Close(context.Background()) }
		}},
		{"throttled", func(b *testing.B) (take, func()) {
			s, err := throttledstore.NewCtx(numKeys)
			if err != nil {
				b.Fatal(err)
			}
			// 1e9 per second: throttled overflows above that.
			l, err := throttled.NewGCRARateLimiterCtx(s, throttled.RateQuota{MaxRate: throttled.PerSec(1_000_000_000), MaxBurst: 1_000_000_000})
			if err != nil {
				b.Fatal(err)
			}
			return func(ctx context.Context, key string) (bool, error) {
				limited, _, err := l.RateLimitCtx(ctx, key, 1)
				return !limited, err
			}, func() {}
		}},
		{"ulule", func(b *testing.B) (take, func()) {
			l := ulule.New(ululestore.NewStore(), ulule.Rate{Period: time.Hour, Limit: math.MaxInt64 / 2})
			return func(ctx context.Context, key string) (bool, error) {
				c, err := l.Get(ctx, key)
				return !c.Reached, err
			}, func() {}
		}},
	}
}

// keys returns the numKeys keys every store is filled with.
func keys() []string {
	k := make([]string, numKeys)
	for i := range k {
		k[i] = "user:" + strconv.Itoa(i)
	}
	return k
}

// setup builds im and asks it once about every key.
func setup(b *testing.B, im impl, ks []string) (take, func()) {
	t, done := im.make(b)
	ctx := context.Background()
	for _, k := range ks {
		if _, err := t(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
	return t, done
}

// BenchmarkKey measures a decision for a given key while the store holds 100,000 keys: serial
// asks about one key, parallel has each goroutine ask about its own key.
func BenchmarkKey(b *testing.B) {
	ks := keys()
	ctx := context.Background()
	for _, im := range impls() {
		b.Run("impl="+im.name+"/mode=serial", func(b *testing.B) {
			t, done := setup(b, im, ks)
			defer done()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := t(ctx, ks[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("impl="+im.name+"/mode=parallel", func(b *testing.B) {
			t, done := setup(b, im, ks)
			defer done()
			var seq atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				key := ks[seq.Add(1)*(numKeys/64)%numKeys]
				for pb.Next() {
					if _, err := t(ctx, key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkSpread asks about all 100,000 keys in turn, in an order unrelated to their insertion
// (a stride prime to numKeys): every decision reaches memory the caches do not hold, as on a server
// with that many active clients. Token bucket only for steady (the algorithms differ little next to
// the cache misses).
func BenchmarkSpread(b *testing.B) {
	const stride = 7919
	ks := keys()
	ctx := context.Background()
	for _, im := range impls() {
		if im.name != "steady-token-bucket" && len(im.name) > 7 && im.name[:7] == "steady-" {
			continue
		}
		b.Run("impl="+im.name+"/mode=serial", func(b *testing.B) {
			t, done := setup(b, im, ks)
			defer done()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := t(ctx, ks[i]); err != nil {
					b.Fatal(err)
				}
				i = (i + stride) % numKeys
			}
		})
		b.Run("impl="+im.name+"/mode=parallel", func(b *testing.B) {
			t, done := setup(b, im, ks)
			defer done()
			var seq atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(seq.Add(numKeys/7) % numKeys)
				for pb.Next() {
					if _, err := t(ctx, ks[i]); err != nil {
						b.Error(err)
						return
					}
					i = (i + stride) % numKeys
				}
			})
		})
	}
}
