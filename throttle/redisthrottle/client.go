package redisthrottle

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ClientOptions parses a Redis URL (redis://[[user]:password@]host[:port][/db][?options], or
// rediss:// for TLS; see redis.ParseURL) into options for redis.NewClient that a Limiter accepts:
// ContextTimeoutEnabled is set, so each call keeps the limiter's deadline. A malformed URL returns
// an error matching ErrInvalidOption.
//
//	opts, err := redisthrottle.ClientOptions("redis://127.0.0.1:6379/0")
//	rdb := redis.NewClient(opts)
//	defer rdb.Close()
func ClientOptions(url string) (*redis.Options, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%w: Redis URL: %w", ErrInvalidOption, err)
	}
	o.ContextTimeoutEnabled = true
	return o, nil
}
