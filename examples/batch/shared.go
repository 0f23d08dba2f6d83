package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
// redisthrottle), and the run goes on. A non-nil logger (-v) is told when Redis becomes
// unreachable and answers again, and each step of the shared law this process makes.
func openShared(cfg *config, logger *slog.Logger) *shared {
	if cfg.shared == nil {
		return nil
	}
	// go-redis logs every failed dial on stderr; the run reports Redis failures itself (describe).
	redis.SetLogger(quietLogger{})
	s := &shared{url: cfg.sharedURL, rdb: redis.NewClient(cfg.shared)}
	opts := []redisthrottle.Option{redisthrottle.WithLogger(logger)}
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

// sharedReport is what the processes' shared quota did for this process, after a run.
type sharedReport struct {
	// Processes is the number of processes Redis last counted on the quota (see
	// redisthrottle.LiveWindow), PeakProcesses the most it counted at once during the run (one
	// that finished drops out of the count after LiveWindow, so a run that ended less than that
	// before this one counts too); PaceRPS the pace this process last heard of (a probe's can be
	// above the server's rate for a moment).
	Processes     int     `json:"processes"`
	PeakProcesses int     `json:"peak_processes"`
	PaceRPS       float64 `json:"pace_rps"`
	// RedisReservations were booked in Redis, LocalReservations by the local fallback while Redis
	// was unreachable.
	RedisReservations int64 `json:"redis_reservations"`
	LocalReservations int64 `json:"local_reservations"`
	// LostSlots are slots of requests that were not sent (a pause, a deadline) that could not be
	// given back: the schedule was idle for them.
	LostSlots int64 `json:"lost_slots"`
	// RedisErrors counts failed Redis calls; LastError is the last one.
	RedisErrors int64  `json:"redis_errors"`
	LastError   string `json:"last_error,omitempty"`
}

// report sums the stats of the run's limiters (one per host).
func (s *shared) report() *sharedReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r sharedReport
	for _, l := range s.lims {
		ls := l.Stats()
		r.PaceRPS, r.Processes = round(ls.Rate, 2), max(r.Processes, ls.Processes)
		r.PeakProcesses = max(r.PeakProcesses, ls.PeakProcesses)
		r.RedisReservations += ls.Redis
		r.LocalReservations += ls.Fallback
		r.LostSlots += ls.Lost
		r.RedisErrors += ls.Errors
		if ls.LastError != nil {
			r.LastError = ls.LastError.Error()
		}
	}
	return &r
}

// describe writes one line about the shared quota after a run: the processes sharing it, the pace,
// and how many reservations Redis served (and how many the local fallback did, when Redis was
// unreachable).
func (s *shared) describe(w io.Writer) {
	r := s.report()
	if r.RedisReservations == 0 {
		fmt.Fprintf(w, "batch: shared quota at %s: Redis never answered; paced alone, at %.1f req/s at the end; %d local reservations",
			s.url, r.PaceRPS, r.LocalReservations)
		if r.RedisErrors > 0 {
			fmt.Fprintf(w, " (%d failed Redis calls, the last: %s)", r.RedisErrors, r.LastError)
		}
		fmt.Fprintln(w)
		return
	}
	processes := "processes"
	if r.PeakProcesses == 1 {
		processes = "process"
	}
	fmt.Fprintf(w, "batch: shared quota at %s: %d %s", s.url, r.PeakProcesses, processes)
	if r.Processes != r.PeakProcesses {
		fmt.Fprintf(w, " (%d at the end)", r.Processes)
	}
	fmt.Fprintf(w, ", shared pace %.1f req/s; %d reservations from Redis, %d local, %d slots lost",
		r.PaceRPS, r.RedisReservations, r.LocalReservations, r.LostSlots)
	if r.RedisErrors > 0 {
		fmt.Fprintf(w, " (%d failed Redis calls, the last: %s)", r.RedisErrors, r.LastError)
	}
	fmt.Fprintln(w)
}
