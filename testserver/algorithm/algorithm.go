package algorithm

import (
	"slices"
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
	// (after committing this decision, when Allowed): for the buckets, until the bucket is full (or
	// the queue empty) again; for the fixed window, until the current window ends; for the sliding
	// log, until its newest entry leaves the window; for the sliding window counter, until neither the
	// current nor the previous window weighs on the count. Never negative.
	ResetAfter time.Duration
	// RetryAfter, when the decision is a denial, is the shortest wait after which the same n
	// requests would be admitted if nothing else arrives: retried exactly then they are admitted,
	// one nanosecond earlier they are not. Zero when Allowed. Never when n can never be admitted
	// (n above the burst).
	RetryAfter time.Duration
	// Delay, for an admitted request of the leaky bucket, is how long it waits in the queue before
	// its slot (for n > 1, the slot of the last of them): a shaping server holds the answer this long.
	// Zero for every other algorithm and for denials.
	Delay time.Duration
}

// Never is the RetryAfter of a request that can never be admitted, such as n above the burst.
const Never = time.Duration(1<<63 - 1)

// State is the per-key state of any algorithm. Its zero value is the initial state (a full quota).
// It takes 56 bytes plus, for the sliding log, 16 bytes per distinct admission instant in the window.
// Which fields an algorithm uses is its own business; callers only store and hand back States.
// A State is not safe for concurrent use.
type State struct {
	// A, B and C are integer registers (for example the time of the last update in Unix
	// nanoseconds, a window start, a count, or the halves of a 128-bit quantity).
	A, B, C int64
	// Log holds the sliding window log: a ring buffer of (admission time, running total) pairs,
	// allocated on first use and grown up to Limit pairs. A plain copy of a State shares it; see Clone.
	Log []int64
	// Head indexes the oldest entry of Log when it is used as a ring.
	Head int
}

// Algorithm decides admissions for one rule. Implementations are safe for concurrent use; the State
// passed in is not, and must be guarded by the caller.
//
// A request that costs n < 1 is treated as costing 1, by Decide and Commit alike.
type Algorithm interface {
	// Name is the algorithm's flag name, such as "token-bucket".
	Name() string
	// Limit is the quota advertised per Window.
	Limit() int64
	// Window is the period of the advertised quota.
	Window() time.Duration
	// Burst is how many requests a fresh key admits at one instant (Limit for the window algorithms).
	Burst() int64
	// Decide reports whether n requests at now are admitted against s. It does not change s.
	Decide(s *State, now time.Time, n int64) Decision
	// Commit records n requests admitted at now into s. Call it only after Decide allowed them at
	// the same now; it never panics otherwise, but what it then records is unspecified.
	Commit(s *State, now time.Time, n int64)
	// Idle reports whether s at now admits exactly what a fresh zero State would, now and at every
	// later time, so that forgetting it hands the key nothing it would not already get. Stores evict
	// idle keys first.
	Idle(s *State, now time.Time) bool
}

// Clone returns a copy of s that shares nothing with it (a plain copy of a State shares its Log).
func (s State) Clone() State {
	s.Log = slices.Clone(s.Log)
	return s
}
