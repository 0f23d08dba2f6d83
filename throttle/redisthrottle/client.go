package redisthrottle

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ClientOptions parses a Redis URL (redis://[[user]:password@]host[:port][/db][?options], or
// rediss:// for TLS; see redis.ParseURL) into options for redis.NewClient that a Limiter accepts:
// ContextTimeoutEnabled is set, so each call keeps the limiter's deadline; a connection is dialled
// once per attempt (DialerRetries 1), and a call is retried once (MaxRetries 1, unless the URL
// sets a positive max_retries, or -1 for none; 0 is go-redis's default and reads as not set): a Redis that refuses connections fails the call at once with the dial's own
// error, and the limiter's recheck period (WithRecheck) does the retrying, where go-redis's
// defaults (three retries of five dials 100 ms apart) outlast the limiter's timeout and are
// reported as a deadline. The one retry still replaces a connection Redis closed (a restart). A
// malformed URL returns an error matching ErrInvalidOption.
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
	o.DialerRetries = 1
	if o.MaxRetries == 0 {
		o.MaxRetries = 1
	}
	return o, nil
}
