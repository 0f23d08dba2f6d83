// Package redisthrottle shares one rate limit among many client processes through Redis: a batch
// job split over workers or machines, all calling one API with one key, paces its requests so that
// together they stay under the server's limit and together use nearly all of it.
//
// A Limiter is a throttle.Limiter whose state lives in Redis. Each reservation is one Lua script
// (run by SHA with EVALSHA) that reads Redis TIME and books the next slot of a GCRA schedule for
// the key, so the processes' clocks need not agree and no read-then-write race can let two
// processes take one slot. Its pace is either known (WithRate) or learned: the learned pace is
// the single-process learner's own headerless law (learn.RateLaw), whose state is kept in Redis
// beside the schedule and written back by compare-and-set, so a throttled response seen by one
// process slows all of them, a rate the server declares in its RateLimit headers paces all of
// them, and the law probes upwards once for all of them rather than once per process (see New,
// and docs/shared-learner.md for the model).
//
// Plug it into a client with Factory:
//
//	opts, err := redisthrottle.ClientOptions("redis://127.0.0.1:6379/0")
//	if err != nil { ... }
//	rdb := redis.NewClient(opts)
//	defer rdb.Close()
//	c := client.New(client.WithLimiter(redisthrottle.Factory(rdb, "steady:", redisthrottle.WithRate(100, 1))))
//
// Every process that runs this paces each host it calls at 100 requests per second in total.
//
// When Redis is down or slow, no request waits for it longer than the per-call deadline (50 ms by
// default) and none fails because of it: the limiter falls back to a local limiter at its share
// of the rate (by default one over the number of processes it last saw on the key) and goes back
// to Redis when Redis answers again.
//
// # Time and bounds
//
// The schedule runs on Redis TIME in whole microseconds since the Unix epoch, computed in Lua,
// whose numbers are doubles: integers are exact up to 2^53 µs (the year 2255), and every stored
// time is written as an integer. A known rate's interval is 1/rate rounded up to a microsecond
// (never faster than asked), so rates run from MinRate (one request per 11.6 days) to MaxRate
// (one per microsecond), and interval times burst must stay under 31 years.
//
// Requirements: Redis 5 or later (scripts that read TIME before they write), standalone or
// Cluster (the keys of one limiter share a hash tag). The package starts no goroutines; nothing
// needs closing but the caller's Redis client.
package redisthrottle
