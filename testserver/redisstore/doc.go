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
// Every Apply is one round trip: one Lua script, loaded once and run by EVALSHA (EVAL when Redis
// does not know it, after a restart), reads the state of every check of the request, decides them
// all, and writes back only when every check that is not advisory admits — so a request that must
// pass several limits (IP and user, user and route) is decided all-or-nothing: a denial by one
// consumes nothing from the others. Redis runs scripts one at a time, so there is no
// read-then-write race between instances.
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
// Every Apply gives Redis at most the deadline of WithTimeout (default 50 ms). When Redis errs or
// misses it, each check is decided by its rule's Policy (WithPolicy, WithRulePolicy): Fallback
// (the default) decides it in a local in-memory store with a share of the limit
// (WithFallbackShare), FailOpen admits it, FailClosed denies it. All-or-nothing still holds: a
// FailClosed check denies the request and nothing is counted locally. The failure opens a circuit:
// for WithRetryInterval (default 1 s) Applies are decided by policy at once, without paying the
// deadline; then one Apply probes Redis, and the first success goes back to Redis. go-redis
// reconnects on its own, and the script is reloaded when a restarted Redis has forgotten it. The
// server keeps serving throughout, and Counters tells how many decisions each path made.
//
// # Concurrency
//
// A Store is safe for concurrent use; share one per process (each instance of a distributed
// deployment opens its own). Close it after the Limiters or Servers that use it.
package redisstore
