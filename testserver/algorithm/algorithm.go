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

import (
	"errors"
	"time"
)

// Decision is the outcome of asking whether n requests are admitted at one instant.
type Decision struct {
	// Allowed reports whether the requests are admitted.
	Allowed bool
	// Limit is the number of requests the algorithm admits per Window (the advertised quota).
	Limit int64
	// Remaining is how many more requests would be admitted at the same instant after this decision
	// (after committing it, when Allowed). Never negative.
	Remaining int64
	// ResetAfter is the time until the key's quota is fully restored if no further request arrives
	// (for window algorithms: until the current window ends). Never negative.
	ResetAfter time.Duration
	// RetryAfter, when the decision is a denial, is the shortest wait after which the same n
	// requests would be admitted if nothing else arrives; a request retried exactly then is admitted.
	// Zero when Allowed. When n can never be admitted (n above the capacity) it is Never.
	RetryAfter time.Duration
}

// Never is the RetryAfter of a request that can never be admitted, such as n above the capacity.
const Never = time.Duration(1<<63 - 1)

// State is the per-key state of any algorithm. Its zero value is the initial state (a full quota).
// Which fields an algorithm uses is its own business; callers only store and hand back States.
// A State is not safe for concurrent use.
type State struct {
	// A and B are two integer registers (for example a theoretical arrival time in Unix nanoseconds,
	// or a window start and a count).
	A, B, C int64
	// Log holds timestamps for the sliding window log, a ring buffer of at most Limit entries.
	Log []int64
	// Head indexes the oldest entry of Log when it is used as a ring.
	Head int
}

// Algorithm decides admissions for one rule. Implementations are safe for concurrent use; the State
// passed in is not, and must be guarded by the caller.
type Algorithm interface {
	// Name is the algorithm's flag name, such as "token-bucket".
	Name() string
	// Limit is the quota advertised per Window.
	Limit() int64
	// Window is the period of the advertised quota.
	Window() time.Duration
	// Decide reports whether n requests at now are admitted against s. It does not change s.
	Decide(s *State, now time.Time, n int64) Decision
	// Commit records n requests admitted at now into s. Call it only after Decide allowed them.
	Commit(s *State, now time.Time, n int64)
	// Idle reports whether s at now admits exactly what a fresh zero State would, so that forgetting
	// it hands the key nothing it would not already get. Stores evict idle keys first.
	Idle(s *State, now time.Time) bool
}

// Errors returned by the constructors for invalid parameters. They are matchable with errors.Is.
var (
	ErrInvalidLimit  = errors.New("algorithm: limit must be at least 1")
	ErrInvalidWindow = errors.New("algorithm: window must be positive")
	ErrInvalidBurst  = errors.New("algorithm: burst must be at least 1")
)
