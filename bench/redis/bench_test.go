// Package redisbench compares the Redis store's decisions with github.com/go-redis/redis_rate,
// side by side in one run. It is its own module, so the peer never enters the library's go.mod.
package redisbench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/testserver/redisstore"
)

// BenchmarkRedis measures decisions per second and the p50/p99 latency of one decision on a
// loopback Redis, with 1, 16 and 256 concurrent callers, for the Redis store (one token-bucket
// check per request, decided by its script; concurrent decisions share round trips) and, in the
// same run on the same client (go-redis defaults, context deadlines honoured), for
// github.com/go-redis/redis_rate (its GCRA script, one round trip per decision) doing the same
// work: one limit per key, over 1000 keys, all requests admitted. Beside the wall-clock figures it
// reports the CPU time one decision costs the benchmark's process (the client: getrusage) and the
// Redis server (INFO cpu), which a machine shared with other work disturbs far less: with a lone
// caller, a decision's latency is mostly the two added up. Run from this directory with
//
//	go test -run '^$' -bench BenchmarkRedis -benchtime 20000x -count 10 . | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl new.txt
func BenchmarkRedis(b *testing.B) {
	rdb, impls, check := peers(b)
	for _, callers := range []int{1, 16, 256} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("callers=%d/%s", callers, impl.name), func(b *testing.B) {
				runCallers(b, rdb, callers, impl.keys, impl.decide)
			})
		}
	}
	check()
}

// BenchmarkLoneCaller compares the two with one caller more finely than BenchmarkRedis, where
// each runs for a second or two after the other and load on a shared machine that changes between
// them moves their ratio by several percent: one goroutine alternates them decision by decision
// (on keys of their own, the first of each pair alternating), so both meet the same load, and it
// reports each one's mean latency (the inverse of its decisions per second), its p50, and the
// ratio of the means, steady / redis_rate (below 1: the store is faster). Run with
//
//	go test -run '^$' -bench BenchmarkLoneCaller -benchtime 20000x -count 10 .
func BenchmarkLoneCaller(b *testing.B) {
	_, impls, check := peers(b)
	ctx := context.Background()
	lat := make([][]time.Duration, len(impls))
	for j := range impls {
		lat[j] = make([]time.Duration, 0, b.N)
	}
	for i := 0; b.Loop(); i++ {
		for k := range impls {
			j := (i + k) % len(impls) // who goes first alternates too
			impl := impls[j]
			t0 := time.Now()
			ok, err := impl.decide(ctx, impl.keys[i%len(impl.keys)])
			lat[j] = append(lat[j], time.Since(t0))
			if err != nil || !ok {
				b.Fatalf("%s: allowed %t, %v", impl.name, ok, err)
			}
		}
	}
	b.StopTimer()
	mean := make([]float64, len(impls))
	for j, impl := range impls {
		var sum time.Duration
		for _, d := range lat[j] {
			sum += d
		}
		mean[j] = float64(sum.Nanoseconds()) / 1e3 / float64(len(lat[j]))
		slices.Sort(lat[j])
		name := strings.TrimPrefix(impl.name, "impl=")
		b.ReportMetric(mean[j], name+"-mean-µs")
		b.ReportMetric(float64(lat[j][len(lat[j])/2].Nanoseconds())/1e3, name+"-p50-µs")
	}
	b.ReportMetric(mean[0]/mean[1], "steady/redis_rate")
	check()
}

// peer is one implementation's decision, and the keys it decides on.
type peer struct {
	name   string
	decide func(ctx context.Context, key string) (bool, error)
	keys   []string
}

// peers starts a Redis and returns a client to it, the two implementations on that client, and a
// check that fails the benchmark unless every decision of the store came from Redis.
func peers(b *testing.B) (*redis.Client, []peer, func()) {
	url := redistest.URL(b)
	o, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	o.ContextTimeoutEnabled = true
	rdb := redis.NewClient(o)
	b.Cleanup(func() { _ = rdb.Close() })
	// A deadline the benchmark never meets: every decision must come from Redis.
	prefix := fmt.Sprintf("bench:%d:", time.Now().UnixNano())
	st, err := redisstore.New(rdb, redisstore.WithKeyPrefix(prefix), redisstore.WithTimeout(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() }) // before the client's: cleanups run last first
	const limit, window = 100_000, time.Minute
	tb, err := algorithm.New(algorithm.NameTokenBucket, algorithm.Config{Limit: limit, Window: window})
	if err != nil {
		b.Fatal(err)
	}
	rl := redis_rate.NewLimiter(rdb)
	rlLimit := redis_rate.Limit{Rate: limit, Period: window, Burst: limit}
	// One copy of the run's prefix in each implementation's keys, which keeps runs on one Redis
	// apart: the store adds its own (WithKeyPrefix) to the users' keys, and redis_rate, which has
	// no prefix of its own beyond "rate:", gets it in its keys. (Given the prefixed keys too, the
	// store carried the prefix three times, its state key 110 bytes against redis_rate's 39.)
	keys := make([]string, 1000)
	rlKeys := make([]string, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d", i)
		rlKeys[i] = prefix + keys[i]
	}
	impls := []peer{
		{"impl=steady", func(ctx context.Context, key string) (bool, error) {
			ds, err := st.Apply(ctx, time.Now(), []testserver.StoreCheck{{Rule: "bench", Scope: "bench", Key: key, N: 1, Algorithm: tb}})
			if err != nil {
				return false, err
			}
			return ds[0].Decision.Allowed, nil
		}, keys},
		{"impl=redis_rate", func(ctx context.Context, key string) (bool, error) {
			r, err := rl.Allow(ctx, key, rlLimit)
			if err != nil {
				return false, err
			}
			return r.Allowed > 0, nil
		}, rlKeys},
	}
	check := func() {
		if c := st.Counters(); c.Errors+c.Timeouts != 0 || c.Skipped != 0 {
			b.Fatalf("decisions not all from Redis: %+v", c)
		}
	}
	return rdb, impls, check
}

// runCallers makes b.N decisions from callers goroutines and reports decisions/s, the p50 and p99
// latency of one decision, and the CPU time per decision of this process and of the Redis server
// rdb talks to.
func runCallers(b *testing.B, rdb *redis.Client, callers int, keys []string, decide func(context.Context, string) (bool, error)) {
	ctx := context.Background()
	redisBefore := redisCPU(b, rdb)
	var next atomic.Int64
	lat := make([][]time.Duration, callers)
	var denied atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	clientBefore := processCPU(b)
	start := time.Now()
	for g := range callers {
		wg.Go(func() {
			own := make([]time.Duration, 0, b.N/callers+1)
			defer func() { lat[g] = own }()
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				t0 := time.Now()
				ok, err := decide(ctx, keys[i%len(keys)])
				own = append(own, time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
				if !ok {
					denied.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	clientCPU := processCPU(b) - clientBefore
	b.StopTimer()
	redisCPUUsed := redisCPU(b, rdb) - redisBefore
	if denied.Load() != 0 {
		b.Fatalf("%d decisions denied; the benchmark measures admissions", denied.Load())
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(clientCPU.Nanoseconds())/1e3/float64(len(all)), "client-cpu-µs/op")
	b.ReportMetric(float64(redisCPUUsed.Nanoseconds())/1e3/float64(len(all)), "redis-cpu-µs/op")
}

// processCPU returns the CPU time (user and system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU returns the CPU time (user and system) the Redis server has used, from INFO cpu.
func redisCPU(b *testing.B, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for line := range strings.Lines(info) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "used_cpu_user" && name != "used_cpu_sys") {
			continue
		}
		sec, err := strconv.ParseFloat(value, 64)
		if err != nil {
			b.Fatalf("INFO cpu: %s: %v", line, err)
		}
		total += time.Duration(sec * float64(time.Second))
	}
	return total
}
