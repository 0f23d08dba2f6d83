// Package algorithm holds the server-side rate-limiting algorithms of testserver: token bucket,
// leaky bucket, fixed window counter, sliding window log and sliding window counter.
//
// Every algorithm is clock-free: each decision takes the time as a parameter, and all arithmetic is
// exact integer nanoseconds. An Algorithm holds only its parameters and is safe for concurrent use;
// the per-key State it decides on is not, and callers (the stores) serialise access to one State.
//
// A decision is two steps so that a request that must pass several limits is decided all-or-nothing:
// Decide looks without changing anything, and Commit records admitted requests. Denied requests
// change no state.
package algorithm
