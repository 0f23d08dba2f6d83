package testserver

import (
	"context"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Store keeps the per-key state of every rule and decides requests against it atomically.
//
// The Limiter hands a Store every limit one request must pass in a single Apply call, so a Store
// backed by a shared database (for example Redis, running the algorithm in a script chosen by
// Algorithm.Name, Limit and Window) can decide them all-or-nothing in one round trip.
// Implementations must be safe for concurrent use.
type Store interface {
	// Apply decides every check at now, all-or-nothing: it calls Decide for each check on the
	// state of (Scope, Key); when every check that is not Advisory is allowed (and within its
	// MaxDelay), it commits every allowed check; otherwise it commits nothing but the CountDenied
	// checks (which are committed in both cases). It returns one
	// StoreDecision per check, in order. An error means nothing was decided or committed.
	Apply(ctx context.Context, now time.Time, checks []StoreCheck) ([]StoreDecision, error)
	// Stats reports the store's size and evictions.
	Stats() StoreStats
	// Close releases the store. Apply after Close returns ErrClosed. Close is idempotent.
	Close() error
}

// OwnClockStore is a Store that may decide at a clock of its own rather than at the now passed
// to Apply (redisstore's default reads Redis's clock in its script, so that instances whose clocks
// disagree decide alike): the waits of such a decision are measured from the moment the store
// decided, which the caller does not know. [Limiter.Middleware] measures an answer's waits from
// when it is written by shortening a decision's waits by the time since its now; it leaves those
// of a store that DecidesOnOwnClock as they are (long by the trip back from the store, the safe
// side).
type OwnClockStore interface {
	Store
	// DecidesOnOwnClock reports whether Apply decides at the store's own clock.
	DecidesOnOwnClock() bool
}

// StoreCheck is one limit one request must pass.
type StoreCheck struct {
	// Rule is the rule's name, for eviction counts.
	Rule string
	// Scope is the state namespace (the rule's identity); checks with equal Scope and Key share
	// one state.
	Scope string
	// Key is the request's key under the rule.
	Key string
	// N is the number of requests (at least 1).
	N int64
	// Algorithm decides and commits the check.
	Algorithm algorithm.Algorithm
	// Publish, when not nil, is also asked (Decide only, on the state before any commit) for the
	// figures a response advertises, such as the base quota of a soft rule. It must be able to
	// decide on the same state as Algorithm (algorithm.Scale guarantees that).
	Publish algorithm.Algorithm
	// Advisory checks (shadow mode) never block the others; they are committed only if allowed.
	Advisory bool
	// MaxDelay, when positive, turns an admission whose Delay exceeds it into a denial that
	// commits nothing (a shaped request whose context would expire before its slot).
	MaxDelay time.Duration
	// CountDenied checks are committed whether or not the request is admitted (a rule with
	// Rule.CountDenied); the algorithm must be a counter that tolerates a count above its limit
	// (the sliding window counter).
	CountDenied bool
}

// StoreDecision is the outcome of one StoreCheck.
type StoreDecision struct {
	// Decision is Algorithm's decision.
	Decision algorithm.Decision
	// Published is Publish's decision, or a copy of Decision when Publish is nil.
	Published algorithm.Decision
	// Committed reports whether the check was recorded in the state.
	Committed bool
}

// StoreStats reports a store's size and evictions.
type StoreStats struct {
	// Keys is the number of tracked (scope, key) states.
	Keys int `json:"keys"`
	// MaxKeys is the cap on Keys (0: unbounded or unknown).
	MaxKeys int `json:"max_keys"`
	// Evictions is the total number of states evicted to stay under MaxKeys.
	Evictions int64 `json:"evictions"`
	// EvictedActive counts evictions of states that were not idle (they could hand the key a
	// fresher quota than it had). The memory store never makes one: it decides a key it cannot
	// track on the rule's overflow state instead (see Overflowed).
	EvictedActive int64 `json:"evicted_active"`
	// RuleEvictions counts evictions by rule name.
	RuleEvictions map[string]int64 `json:"rule_evictions,omitempty"`
	// Overflowed counts decisions on keys the store could not track because it was full of
	// states that were not idle: each was decided on its rule's overflow state, which all such
	// keys share (memory store).
	Overflowed int64 `json:"overflowed"`
	// RuleOverflowed counts Overflowed by rule name.
	RuleOverflowed map[string]int64 `json:"rule_overflowed,omitempty"`
	// Shared reports a shared store's round trips, failures and store-down policy decisions; nil
	// for a store of one process (the memory store).
	Shared *SharedStats `json:"shared,omitempty"`
}
