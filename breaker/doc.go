// Package breaker is a circuit breaker per key (a host, by default) for HTTP clients: when a key's
// recent attempts fail too often (5xx responses, transport errors), its circuit opens and the key
// is left alone for a cool-down instead of being hammered while it is down; then a bounded number of
// probes test it (half-open), and their success closes the circuit again.
//
// # States
//
//   - Closed: requests go. Each outcome is counted in a sliding window (WithWindow, 10 s by default,
//     in 10 buckets). When the window holds at least WithMinRequests outcomes (20) and the share of
//     failures among them reaches WithFailureRatio (0.5), the circuit opens.
//   - Open: no request goes for WithCooldown (5 s).
//   - Half-open: after the cool-down, WithProbes requests (1) go as probes. When that many succeed
//     in a row, the circuit closes with an empty window; a probe that fails opens it again for a
//     new cool-down. A probe whose outcome says nothing about the server (the caller gave up, a
//     local refusal) frees its place for another probe.
//
// Outcomes of requests let through in an earlier state (sent while closed, answered after the
// circuit opened) are not counted: a state is judged by its own requests only.
//
// # While open: pause or fail fast
//
// Chosen per Breaker (WithMode). Pause (the default, for batches that must lose nothing): a request
// for an open key waits until the cool-down ends and it may go (as a probe, or after the probes
// closed the circuit), like a request waiting out a Retry-After; it refuses at once when its
// context's deadline comes first. FailFast: it fails at once with *OpenError, which matches
// ErrCircuitOpen.
//
// # Which outcomes are failures
//
// By default a response with a 5xx status and a transport error for which retry.RetryableError
// reports true (refused, reset, EOF, timeouts) are failures; every other response is a success;
// the caller's cancelled or expired context and refusals of the local layers below (the throttle's
// ErrWaitTooLong, a full backlog) count as neither. A 429 is a success here: being throttled is
// the throttle's business, not an outage. WithClassifier replaces the decision.
//
// # Place in steady's stack
//
// queue -> retry -> breaker -> throttle -> base (client.WithBreaker): the breaker counts every
// attempt, so it learns of an outage from the retries too, and a request it holds back or refuses
// has not booked a place in the throttle's pace. See docs/breaker.md.
//
// A Breaker is safe for concurrent use, starts no goroutines and needs no Close. Explicit time is
// the primitive (Allow and Ticket.Record take now); the Transport reads the clock.
package breaker
