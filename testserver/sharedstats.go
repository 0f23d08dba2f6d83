package testserver

// SharedStats reports how a store shared between instances (such as the Redis store) reached its
// decisions: the round trips it made, those that failed, its circuit, and the decisions it left
// to its store-down policy. It is part of [StoreStats] (nil for the memory store), so /-/stats
// serves it.
type SharedStats struct {
	// Decided counts decisions (one per request; a request's checks are decided together) that the
	// shared store made.
	Decided int64 `json:"decided"`
	// RoundTrips counts round trips to the shared store. Decisions in flight at the same moment
	// share one, so under load RoundTrips is well below Decided.
	RoundTrips int64 `json:"round_trips"`
	// Timeouts counts decisions whose deadline passed before the shared store answered; each was
	// decided by the policy.
	Timeouts int64 `json:"timeouts"`
	// Errors counts round trips that failed with an error (a refused connection, a reset, a reply
	// the store did not understand); their decisions were decided by the policy.
	Errors int64 `json:"errors"`
	// Circuit is the circuit's state: "closed" (asking the shared store), "open" (deciding by
	// policy without asking, after failures that persisted), or "probing" (one round trip is
	// testing whether the store is back).
	Circuit string `json:"circuit"`
	// CircuitOpened counts the times the circuit opened.
	CircuitOpened int64 `json:"circuit_opened"`
	// Skipped counts decisions made by the policy without asking, while the circuit was open.
	Skipped int64 `json:"skipped"`
	// Fallback counts checks the Fallback policy decided locally.
	Fallback int64 `json:"fallback"`
	// FailOpen counts checks the FailOpen policy admitted.
	FailOpen int64 `json:"fail_open"`
	// FailClosed counts checks the FailClosed policy denied.
	FailClosed int64 `json:"fail_closed"`
	// Instances is the number of instances sharing the limits, as last seen (registered with a
	// heartbeat, or configured); 0 while unknown.
	Instances int64 `json:"instances"`
	// FallbackShare is the share of each limit the Fallback policy enforces locally now.
	FallbackShare float64 `json:"fallback_share"`
	// Reconciled counts the Fallback policy's local admissions charged to the shared store once it
	// answered again, so that they are not handed out a second time.
	Reconciled int64 `json:"reconciled"`
	// Unreconciled counts local admissions not charged (yet): waiting for the store, or dropped
	// because more piled up than the store keeps (see the store's documentation).
	Unreconciled int64 `json:"unreconciled"`
}

// PolicyDecisions returns the checks decided by the store-down policy: Fallback + FailOpen +
// FailClosed.
func (s *SharedStats) PolicyDecisions() int64 { return s.Fallback + s.FailOpen + s.FailClosed }
