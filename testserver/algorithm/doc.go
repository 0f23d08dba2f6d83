// Package algorithm holds the server-side rate-limiting algorithms of testserver: token bucket,
// leaky bucket, fixed window counter, sliding window log and sliding window counter.
//
// # Time and arithmetic
//
// Every algorithm is clock-free: each decision takes the time as a parameter (now), and all
// arithmetic is exact integer nanoseconds since the Unix epoch. Rates such as Limit/Window need not
// divide evenly: quantities are kept in units of 1/Window of a request, and products of counts and
// nanoseconds are computed in 128 bits, so any Limit and Window up to math.MaxInt64 are exact and
// nothing overflows. Times before the epoch count as the epoch and times after 2262 as the last
// representable instant. A caller whose now is earlier than what the State has already seen (it read
// the clock before another caller committed) is never decided more leniently than a caller at the
// State's latest time: the buckets and the sliding log decide it as of their latest time, the window
// counters count it in their latest window. It is never handed quota it did not wait for.
//
// # Decide and Commit
//
// A decision is two steps so that a request that must pass several limits is decided all-or-nothing:
// Decide looks without changing anything, and Commit records admitted requests. Denied requests
// change no state. A request costs n >= 1; n < 1 is charged as 1. Take is the two in one call, for
// a request that must pass one limit alone: it reads the State once.
//
// A Decision reports whether the requests are admitted, the Limit, the Remaining requests admissible
// at the same instant (never negative), ResetAfter (the time until the quota is fully restored if
// nothing else arrives) and, on a denial, RetryAfter: the exact shortest wait after which the same
// request is admitted if nothing else arrives — admitted at now+RetryAfter, denied one nanosecond
// earlier — or Never when n exceeds the burst. The leaky bucket also reports Delay, the wait for
// the request's slot in its queue (for a shaping server).
//
// # Burst
//
// "Burst" has one meaning everywhere: how many requests a fresh key admits at one instant. With
// Limit 50, Window 1h and Burst 50, every algorithm admits exactly 50 at one instant. Only the buckets
// take a Burst other than Limit.
//
// # The algorithms
//
//   - token-bucket (NewTokenBucket): capacity C = Burst, refill r = Limit/Window; tokens refill to
//     min(C, T + dt*r); n requests are admitted iff T >= n. Equivalent to GCRA with emission interval
//     Window/Limit and tolerance (C-1)*Window/Limit; agrees with golang.org/x/time/rate's AllowN.
//   - leaky-bucket (NewLeakyBucket): interval I = Window/Limit, slot s = max(t, s_last + I); admitted
//     iff s - t <= (Burst-1)*I, i.e. a queue of Burst-1 places behind the request being served
//     (docs/design.md's Q = Burst-1; nginx's burst=Q). As a meter it admits exactly what the token bucket
//     admits; Decision.Delay = s - t.
//   - fixed-window (NewFixedWindow): windows [k*Window, (k+1)*Window) aligned to the epoch; admitted
//     iff count_w + n <= Limit. Up to 2*Limit can pass in an interval of length Window that
//     straddles a boundary.
//   - sliding-log (NewSlidingLog): admitted iff the requests admitted in (t-Window, t] plus n are at
//     most Limit; the log keeps only admitted timestamps, at most Limit entries.
//   - sliding-window (NewSlidingWindow): the two-window approximation; with e the time elapsed in
//     the current window, admitted iff prev*(Window-e) + (cur+n)*Window <= Limit*Window.
//
// New builds any of them by name (see Names); Scale derives the same algorithm with another quota
// that decides on the same States (the testserver's soft and elastic modes).
//
// # State and concurrency
//
// An Algorithm holds only its parameters and is safe for concurrent use. The per-key State it decides
// on is not: callers (the stores) serialise access to one State. The zero State is a fresh key, and
// Idle tells when a State has returned to that, so that a store can forget it without handing the key
// anything. Decide, Commit and Idle never panic, whatever the State holds; a State written by a
// different kind of algorithm (say, after a rule's algorithm changed on reload) is decided on without
// harm but without meaning, so stores should start such keys afresh.
//
// Decide, Commit and Idle allocate nothing, except that the sliding log grows its ring buffer
// (by doubling, up to Limit entries) as a key's traffic first needs it.
package algorithm
