// Command testserver runs steady's server-side rate limiter as a standalone HTTP server.
//
// It answers admitted requests with 200 "ok" (or, with -upstream, forwards them to a real
// upstream as a reverse proxy) and throttled ones with 429, Retry-After, the IETF draft RateLimit
// fields, X-RateLimit-* and an application/problem+json body, exactly as package
// github.com/steadyhttp/steady/testserver does in-process.
//
// Usage:
//
//	go run ./testserver/cmd/testserver [flags]
//
// One rule from flags (defaults in brackets):
//
//	-algorithm NAME    token-bucket | leaky-bucket | fixed-window | sliding-log | sliding-window [token-bucket]
//	-limit N           requests admitted per window, at least 1 [100]
//	-window DURATION   the limit's period, a Go duration such as 1s, 1m, 1h [1s]
//	-burst N           requests a fresh key admits at one instant; 0 means the limit [0]
//	                   (only the token and leaky buckets accept a burst other than the limit)
//	-mode MODE         hard | soft | elastic | shadow [hard]
//	-soft-percent P    soft mode: admit up to limit*(100+P)/100 per window [10]
//	-ceiling N         elastic mode: the most admitted per window while there is spare capacity;
//	                   0 means twice the limit [0]
//	-capacity N        elastic mode: the ceiling applies while fewer than N requests are in
//	                   flight [64]
//	-key SPEC          global | ip | header:NAME (or any testserver.KeySpec, such as user+route) [global]
//	-shape             leaky bucket only: hold each admitted request until its slot (traffic
//	                   shaping) instead of answering at once (policing) [false]
//
// Or many rules from a file:
//
//	-config FILE       a JSON testserver.Config ({"rules": [...], "trusted_proxies": [...], ...});
//	                   it cannot be combined with the single-rule flags above. SIGHUP re-reads
//	                   it: rules are replaced without a restart, the state of unchanged rules is
//	                   kept, and a bad file is reported on stderr while the old rules stay.
//
// Server settings (these also override the config file's):
//
//	-addr HOST:PORT    listen address; port 0 picks a free port [127.0.0.1:8080]
//	-status CODE       status of throttled responses, 400 to 599 [429]
//	-headers BOOL      send Retry-After, the RateLimit fields and the problem body; false sends
//	                   only the status [true]
//	-max-keys N        most per-key states kept in memory [100000]
//	-dialect NAME      answer as a real API does (testserver.WithDialect): ietf, x-ratelimit,
//	                   github, openai, anthropic, shopify, discord, stripe or none; without
//	                   -algorithm the rule uses that API's limiter kind [none: steady's own answer]
//	-upstream URL      reverse-proxy admitted requests to this http(s) URL [none: answer "ok"]
//	-shutdown-timeout  how long SIGINT/SIGTERM waits for requests in progress [10s]
//
// Where per-key state lives (package github.com/steadyhttp/steady/testserver/redisstore):
//
//	-store memory|URL  memory, or redis://HOST:PORT/DB (rediss:// for TLS): every testserver on
//	                   that Redis enforces one limit together; time comes from Redis, so their
//	                   clocks need not agree. Rules must be decidable in whole microseconds
//	                   within the store's exact bounds; others are refused at start [memory]
//	-store-policy P    what decides while Redis is down or slower than -store-timeout:
//	                   fallback (a local limiter) | fail-open | fail-closed [fallback]
//	-store-fallback-share F
//	                   fallback: the share of every limit this instance enforces alone; 0 means
//	                   1/N for the N instances registered in Redis, which keeps their sum near
//	                   the limit (see docs/redis-store.md for each policy's bound) [0]
//	-store-instances N the number of instances sharing the limits, for the fallback's 1/N,
//	                   instead of the count registered in Redis [0: registered]
//	-store-timeout D   deadline of each decision's round trip to Redis [250ms]
//
// With -store redis the server starts even when Redis is down (stderr says whether it answers),
// keeps answering by the policy while it is (each decision within twice -store-timeout), reports
// each failed round trip on stderr (while failures persist the store leaves Redis alone for a
// second at a time), charges the fallback's local admissions to Redis and goes back to it when it
// returns.
//
// On start it prints exactly one line to stdout, "listening on http://HOST:PORT" with the bound
// address (so "-addr 127.0.0.1:0" reveals the port it picked), and nothing else; diagnostics go to
// stderr. Besides the rate-limited application it serves GET /-/stats (the limiter's counters as
// JSON: per rule allowed, denied, shadowed, evictions; per key; the store, and with -store redis
// its round trips, timeouts, errors, circuit and policy decisions under "shared"), GET /metrics
// (the same as Prometheus metrics, with the decision latency; package promstats) and GET
// /-/healthz ("ok"); these paths are never rate limited nor proxied.
//
// SIGINT and SIGTERM shut it down gracefully (stop accepting, let requests in progress finish
// within -shutdown-timeout) and it exits 0. A bad flag or config file gets a one-line message
// naming the bad value and exit status 2; other failures (such as an address in use) exit 1.
package main
