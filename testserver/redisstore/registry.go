package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"
)

// registryKey names the sorted set in which instances register (after the key prefix). Its
// members are instance ids, scored by the Redis time (ms) at which each registration expires.
const registryKey = "instances"

// registryTTLBeats is how many heartbeats an instance's registration outlives its last one: two
// missed beats (a slow round trip, a pause) do not drop a live instance, a third does.
const registryTTLBeats = 3

// registerScript renews this instance's registration, drops the expired ones and returns how many
// instances are registered. It reads Redis's TIME, so the instances' clocks do not matter.
var registerScript = redis.NewScript(`
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], ttl)
return redis.call('ZCARD', KEYS[1])
`)

// newInstanceID returns a random id for this store's registration.
func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// register renews the registration within the store's deadline and records the count; it
// reports whether Redis answered.
func (s *Store) register(ctx context.Context) bool {
	ttl := registryTTLBeats * s.cfg.retryInterval
	v, err := s.call(ctx, func(ctx context.Context) (any, error) {
		return registerScript.Run(ctx, s.client, []string{s.cfg.prefix + registryKey}, s.id, ttl.Milliseconds()).Int64()
	})
	if err != nil {
		return false
	}
	if n, ok := v.(int64); ok && n > 0 {
		s.instances.Store(n)
	}
	return true
}

// heartbeat renews the registration every retry interval until Close, skipping beats while the
// circuit is open (Redis is failing; the last count stands), and loads the library again when a
// decision found it missing. It runs in its own goroutine.
func (s *Store) heartbeat() {
	defer s.beats.Done()
	t := time.NewTicker(s.cfg.retryInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if s.circuit.state() != circuitClosed {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
		if s.libraryLost.Load() {
			s.loadLibrary(ctx)
		}
		s.register(ctx)
		cancel()
	}
}

// deregister removes the registration (best effort, on Close), so the others count one fewer at
// their next beat instead of after the registration expires.
func (s *Store) deregister() {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	_, _ = s.call(ctx, func(ctx context.Context) (any, error) {
		return s.client.ZRem(ctx, s.cfg.prefix+registryKey, s.id).Result()
	})
}

// currentShare returns the share of each limit the Fallback policy enforces now: the configured
// share (WithFallbackShare), else 1/instances (WithInstances, else the registered count), else 1
// while the count is unknown.
func (s *Store) currentShare() float64 {
	if s.cfg.shareSet {
		return s.cfg.share
	}
	n := s.cfg.instances
	if n == 0 {
		n = s.instances.Load()
	}
	if n <= 1 {
		return 1
	}
	return 1 / float64(n)
}
