package testserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// BenchmarkDecide measures one decision per request through the limiter and the memory store,
// for one rule and for three rules (all-or-nothing over three keys).
func BenchmarkDecide(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	rules := []Rule{
		{Name: "per-ip", Key: KeyIP, Algorithm: "token-bucket", Limit: 1 << 40, Window: time.Second},
		{Name: "per-user", Key: "user+route", Algorithm: "sliding-window", Limit: 1 << 40, Window: time.Second},
		{Name: "global", Algorithm: "fixed-window", Limit: 1 << 40, Window: time.Second},
	}
	for _, n := range []int{1, 3} {
		b.Run(strconv.Itoa(n)+"-rules", func(b *testing.B) {
			l := mustLimiter(rules[:n], WithClock(func() time.Time { return now }))
			defer l.Close()
			r := req("GET", "/v1/items", "192.0.2.1:1", "X-User-ID", "42")
			b.ReportAllocs()
			for b.Loop() {
				if res, err := l.Decide(r); err != nil || !res.Allowed {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkMiddleware measures the middleware around an empty handler, headers included.
func BenchmarkMiddleware(b *testing.B) {
	l := mustLimiter([]Rule{{Name: "per-ip", Key: KeyIP, Limit: 1 << 40, Window: time.Second}})
	defer l.Close()
	h := l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := req("GET", "/", "192.0.2.1:1")
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}

// benchKeys is the number of keys the store holds in BenchmarkDecideKey: the default cap.
const benchKeys = DefaultMaxKeys

// benchQuota returns the quota of BenchmarkDecideKey's rule: high enough that every decision
// admits (as the peers' benchmarks do). The sliding log keeps an entry per admission instant in its
// window, so its window is a millisecond, with 2^14 per millisecond (16 million a second, above
// any rate a benchmark reaches here): a key's log then holds the last millisecond's decisions,
// at most 256 KB, instead of a second's (millions of entries, 16 bytes each, growing for the whole
// first second of a run).
func benchQuota(alg string) (limit int64, window time.Duration) {
	if alg == "sliding-log" {
		return 1 << 14, time.Millisecond
	}
	return 1 << 40, time.Second
}

// benchKeyLimiter returns a limiter with one rule of algorithm alg on the real clock, its store
// holding benchKeys keys ("user:0", "user:1", ...).
func benchKeyLimiter(b *testing.B, alg string) (*Limiter, []string) {
	limit, window := benchQuota(alg)
	l := mustLimiter([]Rule{{Name: "r", Key: KeyUser, Algorithm: alg, Limit: limit, Window: window}}, WithStatsKeys(0))
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
		if _, err := l.DecideKey(context.Background(), "r", keys[i]); err != nil {
			b.Fatal(err)
		}
	}
	return l, keys
}

// BenchmarkDecideKey measures a decision for a given key (what key-value limiters such as
// sethvargo/go-limiter measure) while the memory store holds 100,000 keys, on the real clock, for
// every algorithm: serial asks about one key; parallel has each goroutine ask about its own key.
func BenchmarkDecideKey(b *testing.B) {
	ctx := context.Background()
	for _, alg := range algorithm.Names() {
		b.Run(alg+"/serial", func(b *testing.B) {
			l, keys := benchKeyLimiter(b, alg)
			defer l.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.DecideKey(ctx, "r", keys[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(alg+"/parallel", func(b *testing.B) {
			l, keys := benchKeyLimiter(b, alg)
			defer l.Close()
			var seq atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				key := keys[seq.Add(1)*(benchKeys/64)%benchKeys]
				for pb.Next() {
					if _, err := l.DecideKey(ctx, "r", key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkDecideKeySpread is BenchmarkDecideKey (token bucket) asking about all 100,000 keys in
// turn, in an order unrelated to their insertion: every decision then reaches memory the caches
// do not hold, which is what a server with that many active clients pays.
func BenchmarkDecideKeySpread(b *testing.B) {
	ctx := context.Background()
	const stride = 7919 // prime to benchKeys: the walk visits every key
	l, keys := benchKeyLimiter(b, "token-bucket")
	defer l.Close()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := l.DecideKey(ctx, "r", keys[i]); err != nil {
				b.Fatal(err)
			}
			i = (i + stride) % benchKeys
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var seq atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := int(seq.Add(benchKeys/7) % benchKeys)
			for pb.Next() {
				if _, err := l.DecideKey(ctx, "r", keys[i]); err != nil {
					b.Error(err)
					return
				}
				i = (i + stride) % benchKeys
			}
		})
	})
}
