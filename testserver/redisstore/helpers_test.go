package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// prefixes makes every store of a test run write its own keys, so tests sharing a Redis (as with
// STEADY_REDIS_URL) never see each other's state.
var prefixes atomic.Int64

func uniquePrefix(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_", "{", "(", "}", ")").Replace(t.Name())
	return fmt.Sprintf("steadytest:%d:%d:%s:", time.Now().UnixNano(), prefixes.Add(1), name)
}

// openStore opens a Store on url with a test-unique key prefix (unless opts set one later) and
// closes it when the test ends.
func openStore(t testing.TB, url string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(url, append([]Option{WithKeyPrefix(uniquePrefix(t))}, opts...)...)
	if err != nil {
		t.Fatalf("Open(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newClient returns a client of url closed when the test ends.
func newClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o.ContextTimeoutEnabled = true
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func mustAlg(t testing.TB, name string, limit int64, window time.Duration, burst int64) algorithm.Algorithm {
	t.Helper()
	a, err := algorithm.New(name, algorithm.Config{Limit: limit, Window: window, Burst: burst})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustScale(t testing.TB, a algorithm.Algorithm, limit int64) algorithm.Algorithm {
	t.Helper()
	s, err := algorithm.Scale(a, limit)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ceilMicro rounds d up to a whole microsecond (Never stays Never): the resolution the Redis
// store decides at.
func ceilMicro(d time.Duration) time.Duration {
	if d == algorithm.Never || d <= 0 {
		return d
	}
	return (d + time.Microsecond - 1) / time.Microsecond * time.Microsecond
}

// atMicros rounds a decision's durations up to microseconds.
func atMicros(d algorithm.Decision) algorithm.Decision {
	d.ResetAfter = ceilMicro(d.ResetAfter)
	d.RetryAfter = ceilMicro(d.RetryAfter)
	d.Delay = ceilMicro(d.Delay)
	return d
}

func apply(t testing.TB, s testserver.Store, now time.Time, checks ...testserver.StoreCheck) []testserver.StoreDecision {
	t.Helper()
	ds, err := s.Apply(context.Background(), now, checks)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return ds
}

// startRedis starts a redis-server of the test's own (Stop/Restart need one; STEADY_REDIS_URL is
// not used).
func startRedis(t testing.TB) *redistest.Server { return redistest.Start(t) }
