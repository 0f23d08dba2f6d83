// Package redisstore is a testserver.Store on Redis: any number of testserver instances (or
// Limiters, or Middleware) sharing one Redis enforce one limit together.
//
//	store, err := redisstore.Open("redis://127.0.0.1:6379/0", redisstore.WithPolicy(redisstore.Fallback))
//	if err != nil { ... }
//	defer store.Close()
//	srv, err := testserver.New(testserver.WithStore(store), testserver.WithRules(rules...))
//
// # Decisions
//
// Every Apply runs one Lua script (one for a request of one check, the usual one, and one for
// several; both are built from the same Lua pieces, see scripts.go), loaded before the store is
// returned and run as a function of the store's library by FCALL on Redis 7 and later (FUNCTION
// LOAD; the library's name carries a hash of the scripts, so releases sharing one Redis each call
// their own), else by EVALSHA (EVAL when Redis does not know it, after a restart), that reads the
// state of every check of the request, decides them all, and writes back only when every check
// that is not advisory admits — so a request that must pass several limits (IP and user, user
// and route) is decided all-or-nothing: a denial by one consumes nothing from the others. Redis
// runs scripts one at a time, so there is no read-then-write race between instances: a decision
// Redis makes never admits above the limit.
// Concurrent Applies share round trips: at most WithPipelines round trips are in flight, and the
// Applies that arrive meanwhile go together in the next one (a pipeline of scripts).
//
// The script implements the five algorithms of package algorithm with the same semantics, on the
// same kind of state, deciding exactly as the testserver's MemoryStore does (the tests replay
// random traces against both and compare every decision). Time comes from Redis's TIME inside the
// script, so instances whose clocks disagree decide identically; WithCallerClock uses the now
// passed to Apply instead (for trace replays).
//
// # Exact arithmetic
//
// Lua numbers are IEEE doubles, exact for integers up to 2^53, so the script works in whole
// microseconds (Redis TIME's resolution) rather than the algorithms' nanoseconds, and the store
// accepts only checks whose arithmetic stays below 2^53:
//
//   - the window is a whole number of microseconds, at most MaxWindow (about 71 years);
//   - Limit, Burst and a request's N are at most MaxCount (2^51);
//   - token and leaky bucket: Burst × Window in µs at most MaxProduct (2^51 ≈ 2.25e15, for example
//     a burst of a million per 37 minutes, or 25,000 per day);
//   - sliding window counter: Limit × Window in µs at most MaxProduct;
//   - the decision time is before 2112 (2^52 µs after the epoch);
//   - the sliding log's running totals count the requests of one busy period (from a key's first
//     request until it is idle again) and stay exact below 2^53 of them.
//
// Apply returns a *CheckError (matching ErrUnsupported) for a check beyond them; ValidateRules
// checks a rule list at startup, and Supports one algorithm. Within them every decision equals
// the memory store's with each duration (ResetAfter, RetryAfter, Delay) rounded up to a whole
// microsecond — for RetryAfter the safe direction: a client that waits that long is admitted.
//
// # Keys
//
// Each (scope, key) state is a string key holding the algorithm's three integer registers; the
// sliding log adds a sorted set of admission instants (score: the time in µs; member: the running total of admitted
// requests), one entry per instant, never more than Limit of them. The names are
//
//	<prefix>{<tag>}<len(scope)>:<scope>:<key>:s   and   ...:z
//
// with the prefix of WithKeyPrefix ("steady:") and the hash tag of WithHashTag (default: the
// request's key). Every write sets the keys to expire (SET PX, PEXPIRE) when the state is back at its
// initial state, so idle keys cost Redis nothing; a denied request writes nothing.
//
// Redis Cluster routes a script by its keys, which must all hash to one slot: the part in braces
// decides it. With the default tag, all rules keyed alike share a slot (a key's states live on
// one node); a request whose rules use different keys (ip and user) needs a tag both share —
// WithHashTag(func(rule, key string) string { return "limits" }) puts all on one node. Under a
// *redis.ClusterClient or *redis.Ring client, Apply returns ErrCrossSlot for checks whose tags
// differ instead of letting Redis fail them.
//
// # When Redis is slow or down
//
// Each round trip gives Redis the deadline of WithTimeout (default 250 ms), counted from when it
// is sent; an Apply waits at most one round trip for a free pipeline first, so it returns within
// twice the deadline even when Redis hangs. A round trip that errs or misses its deadline sends
// its own checks to their rule's Policy (WithPolicy, WithRulePolicy): Fallback (the default)
// decides them in a local in-memory store with a share of the limit, FailOpen admits them,
// FailClosed denies them. All-or-nothing still holds: a FailClosed check denies the request and
// nothing is counted locally.
//
// Latency is not failure: the next Apply still asks Redis. The circuit opens only when failures
// have persisted, with no success between, for WithFailureWindow (default 1 s), or at once when
// the connection is refused; then for WithRetryInterval (default 1 s) Applies are decided by policy
// at once, then one Apply probes Redis, and the first success closes the circuit. go-redis
// reconnects on its own, and the script is reloaded when a restarted Redis has forgotten it.
//
// The Fallback policy's default share is 1/N: every store registers in Redis (a sorted set under
// the key prefix, renewed every retry interval, expiring after three missed renewals, removed by
// Close), so each knows how many instances share the limits; WithInstances sets N instead, and
// WithFallbackShare fixes the share. The local admissions are charged to Redis by the first round
// trip that reaches it again, so they are not handed out a second time. The bound each policy
// keeps on over-admission (0 for FailClosed, one burst per outage for Fallback, none for
// FailOpen) is derived and tested in docs/redis-store.md of the repository. The server keeps
// serving throughout, and Counters (also served in /-/stats) tells how each decision was made.
//
// # Concurrency
//
// A Store is safe for concurrent use; share one per process (each instance of a distributed
// deployment opens its own). Close it after the Limiters or Servers that use it.
package redisstore
