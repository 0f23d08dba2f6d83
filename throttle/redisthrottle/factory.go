package redisthrottle

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/throttle"
)

// Factory returns a limiter factory for client.WithLimiter or throttle.WithLimiter: the Limiter of
// a key (by default a host) is New(rdb, prefix+key, opts...), so every process whose factory has
// the same prefix paces that host against one shared budget. Options are checked once, here: a bad
// option, a nil client or a client without ContextTimeoutEnabled returns a factory that fails
// every key with that error (matchable with errors.Is), so the requests fail instead of going out
// unpaced. An empty key (a request URL without a host) is refused with ErrInvalidKey.
//
// The factory makes no Redis call and is safe for concurrent use.
func Factory(rdb redis.UniversalClient, prefix string, opts ...Option) func(key string) (throttle.Limiter, error) {
	cfg, err := newConfig(rdb, opts)
	if err != nil {
		return func(string) (throttle.Limiter, error) { return nil, err }
	}
	return func(key string) (throttle.Limiter, error) {
		if key == "" {
			return nil, fmt.Errorf("%w: the request has no host", ErrInvalidKey)
		}
		l, err := newLimiter(rdb, prefix+key, cfg)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}
