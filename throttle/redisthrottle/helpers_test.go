package redisthrottle

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/internal/redistest"
)

// newClient returns a go-redis client for url that honours context deadlines, closed when the test
// ends.
func newClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	opts, err := ClientOptions(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// explicit makes l's scripts use the caller's time (in µs) instead of Redis TIME, so tests can
// drive the shared state with exact times.
func explicit(l *Limiter) *Limiter {
	l.nowMicros = func(t time.Time) int64 { return t.UnixMicro() }
	return l
}

// testTimeout is the Redis call deadline of explicit-time tests: long enough that a loaded machine
// never turns a slow call into a fallback (tests that want the fallback stop Redis, or pass
// WithTimeout themselves).
const testTimeout = 5 * time.Second

// mustNew is New that fails the test on error, with explicit time and testTimeout.
func mustNew(t testing.TB, c redis.UniversalClient, key string, opts ...Option) *Limiter {
	t.Helper()
	l, err := New(c, key, append([]Option{WithTimeout(testTimeout)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return explicit(l)
}

// hget reads one field of a limiter's state hash.
func hget(t testing.TB, c *redis.Client, l *Limiter, field string) string {
	t.Helper()
	v, err := c.HGet(context.Background(), l.Key(), field).Result()
	if err != nil {
		t.Fatalf("HGET %s %s: %v", l.Key(), field, err)
	}
	return v
}

// redisURL is the test's Redis.
func redisURL(t testing.TB) string { return redistest.URL(t) }

// epoch is a fixed, deliberately uneven instant (µs are not a round number) for explicit-time
// tests.
var epoch = time.UnixMicro(1_776_543_210_123_457)
