package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/throttle"
	"github.com/steadyhttp/steady/throttle/redisthrottle"
)

// sharedPrefix begins the Redis key of a shared quota; the rest is the target's host (with its
// port, when the URL names one), so every batch process with the same -shared Redis and the same
// target host paces against one quota: "{steady:batch:api.example.com}".
const sharedPrefix = "steady:batch:"

// parseShared checks the -shared value: empty (no shared quota) or a redis:// or rediss:// URL
// (redis://HOST:PORT/DB). It returns the go-redis options for it, or a *usageError.
func parseShared(s string) (*redis.Options, error) {
	if s == "" {
		return nil, nil
	}
	if u, err := url.Parse(s); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil, usagef("invalid -shared %q: want a Redis URL, redis://HOST:PORT/DB", s)
	}
	o, err := redisthrottle.ClientOptions(s)
	if err != nil {
		return nil, usagef("invalid -shared %q: %v", s, errors.Unwrap(err))
	}
	return o, nil
}

// shared is a quota shared with other processes through Redis (-shared): each key (host) the
// batch calls is paced by a redisthrottle.Limiter, at the known pace with -rate (less the
// -margin, with its -burst), or at the pace all the processes learn together without it.
type shared struct {
	url     string
	rdb     *redis.Client
	factory func(key string) (throttle.Limiter, error)

	mu   sync.Mutex
	lims []*redisthrottle.Limiter
}

// openShared connects the shared quota of cfg, or returns nil without -shared. It makes no Redis
// call: a Redis that is down is found out by the first request, which is then paced locally (see
// redisthrottle), and the run goes on.
func openShared(cfg *config) *shared {
	if cfg.shared == nil {
		return nil
	}
	// go-redis logs every failed dial on stderr; the run reports Redis failures itself (describe).
	redis.SetLogger(quietLogger{})
	s := &shared{url: cfg.sharedURL, rdb: redis.NewClient(cfg.shared)}
	var opts []redisthrottle.Option
	if cfg.rate > 0 {
		opts = append(opts, redisthrottle.WithRate(cfg.pacedRate(), cfg.pacedBurst()))
	}
	s.factory = redisthrottle.Factory(s.rdb, sharedPrefix, opts...)
	return s
}

// quietLogger discards go-redis's internal log.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// option is the client option that paces every host through the shared quota.
func (s *shared) option() client.Option {
	return client.WithLimiter(func(key string) (throttle.Limiter, error) {
		l, err := s.factory(key)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.lims = append(s.lims, l.(*redisthrottle.Limiter))
		s.mu.Unlock()
		return l, nil
	})
}

// close closes the Redis client.
func (s *shared) close() { _ = s.rdb.Close() }

// describe writes one line about the shared quota after a run: the processes sharing it, the pace,
// and how many reservations Redis served (and how many the local fallback did, when Redis was
// unreachable).
func (s *shared) describe(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st redisthrottle.Stats
	for _, l := range s.lims {
		ls := l.Stats()
		st.Rate, st.Processes = ls.Rate, max(st.Processes, ls.Processes)
		st.Redis += ls.Redis
		st.Fallback += ls.Fallback
		st.Errors += ls.Errors
		if ls.LastError != nil {
			st.LastError = ls.LastError
		}
	}
	fmt.Fprintf(w, "batch: shared quota at %s: %d processes, shared pace %.1f req/s; %d reservations from Redis, %d local",
		s.url, st.Processes, st.Rate, st.Redis, st.Fallback)
	if st.Errors > 0 {
		fmt.Fprintf(w, " (%d failed Redis calls, the last: %v)", st.Errors, st.LastError)
	}
	fmt.Fprintln(w)
}
