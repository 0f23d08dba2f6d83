// Package testserver is steady's server-side rate limiter: the limiter the client is tested
// against, and one users can put in front of their own services.
//
// It is usable three ways:
//
//   - In Go tests: [New] (or [NewT]) starts an httptest-style server on 127.0.0.1 whose handler
//     answers admitted requests with a configurable status, body and latency, injects faults
//     (extra latency, a fraction of 500/502/503 responses, connection resets), records the arrival
//     of every request, and serves /-/stats (JSON counters) and /-/healthz.
//   - As middleware: [Middleware] or [Limiter.Middleware] wraps any http.Handler.
//   - As a binary: ./testserver/cmd/testserver, built on this package's API.
//
// # Rules, keys and modes
//
// A [Rule] matches requests (methods, path prefix), derives a key from each request ([KeySpec]:
// the whole server, the client IP, a header value, the route, or combinations such as
// "user+route"), and applies one of the algorithms of package algorithm (token bucket, leaky
// bucket, fixed window, sliding log, sliding window counter) with a limit per window and a burst,
// in one of four modes ([Mode]): hard, soft (a percentage above the limit), elastic (above the
// limit up to a ceiling while the server has spare capacity) and shadow (never deny; mark and
// count). Tiers give single keys their own limits. A server or limiter without a rule
// ([WithRules], or the binary's -limit and -window) limits nothing: it admits every request.
//
// A request that matches several rules must pass all of them, and a denial by one consumes nothing
// from the others: the [Store] decides every limit first and commits only when all admit, under
// per-key locks taken in a consistent order.
//
// # Responses
//
// A throttled request gets status 429 (configurable with [WithStatus]) with Retry-After in
// delay-seconds rounded up (at least 1, so a client that waits exactly that long is admitted), the
// IETF draft RateLimit-Policy and RateLimit fields, X-RateLimit-Limit/Remaining/Reset (Reset in
// delta-seconds), and an RFC 9457 application/problem+json body. Admitted responses carry the
// RateLimit fields too. [WithHeaders](false) switches all of that off: the status alone.
// [WithDialect] answers as a real API does instead (GitHub's 403s, OpenAI's duration resets,
// Shopify's call-limit header, ...), with that API's limiter kind for rules that name none.
// [NewOperations] simulates an API of long-running operations (202 Accepted and a status URL to
// poll); pass it to [WithHandler] so that its polls are rate-limited too.
//
// # Time
//
// The limiter reads time from one clock ([WithClock], default the system clock) and passes it to the
// algorithms, which are exact and clock-free; tests control time by injecting a clock or by
// running inside a testing/synctest bubble.
package testserver
