package testserver

import (
	"slices"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Result is the limiter's decision on one request.
type Result struct {
	// Allowed reports whether the request is admitted: every matching rule that is not in shadow
	// mode admitted it. A request no rule matches is admitted with no Rules.
	Allowed bool
	// Shadowed reports whether a shadow-mode rule would have denied the request.
	Shadowed bool
	// RetryAfter, when the request is denied, is the shortest wait after which it would be
	// admitted if nothing else arrived: the longest RetryAfter of the rules that denied it.
	RetryAfter time.Duration
	// Delay is how long a shaping rule holds the admitted request before it is served (its
	// leaky-bucket slot); zero without shaping.
	Delay time.Duration
	// Rules holds one entry per matching rule, in rule order.
	Rules []RuleResult
}

// RuleResult is one rule's part of a [Result].
type RuleResult struct {
	// Rule is the rule's name.
	Rule string
	// Key is the request's key under the rule.
	Key string
	// Tier is the tier key that set the quota, "" for the rule's own quota.
	Tier string
	// Mode is the rule's mode.
	Mode Mode
	// Allowed reports whether this rule admits the request (for a shadow rule: would admit).
	Allowed bool
	// Committed reports whether the request was counted against this rule's quota.
	Committed bool
	// Shadowed reports whether this shadow-mode rule would have denied the request.
	Shadowed bool
	// Elastic reports whether an elastic rule admitted the request above its limit.
	Elastic bool
	// Limit and Window are the advertised quota (the rule's or its tier's, not the soft or
	// elastic allowance).
	Limit  int64
	Window time.Duration
	// Remaining is how many more requests the advertised quota admits now. Never negative.
	Remaining int64
	// Reset is the time until the advertised quota is fully restored (window algorithms: until
	// the window ends).
	Reset time.Duration
	// RetryAfter, when this rule denies, is the shortest wait after which it would admit the
	// request if nothing else arrived. For an elastic rule it is the wait for the base limit, so it
	// holds whether or not the server has spare capacity then.
	RetryAfter time.Duration
	// Delay is the request's leaky-bucket slot delay when the rule shapes traffic.
	Delay time.Duration
}

// age moves res's waits from the instant it was decided at to lag later, the instant its answer
// is written: each wait shortens by lag, down to zero (a wait that can never end stays Never). A
// decision is made at the clock read before it, but the answer leaves after the store's round trip
// or the wait for the key's lock, and a caller that read the clock before another caller's
// decision was committed is decided at that later time: its waits, measured from its own read,
// would name a reset beyond the window. The time now is at least that later time, so a wait aged
// this way is never shorter than the real one, where the store decided at the now it was given
// (not so for an OwnClockStore's). lag <= 0 changes nothing.
func (res *Result) age(lag time.Duration) {
	if lag <= 0 {
		return
	}
	res.RetryAfter, res.Delay = shorten(res.RetryAfter, lag), shorten(res.Delay, lag)
	for i := range res.Rules {
		rr := &res.Rules[i]
		rr.Reset, rr.RetryAfter, rr.Delay = shorten(rr.Reset, lag), shorten(rr.RetryAfter, lag), shorten(rr.Delay, lag)
	}
}

// shorten returns the wait d, lag > 0 later: d-lag, at least zero; Never stays Never.
func shorten(d, lag time.Duration) time.Duration {
	if d == algorithm.Never {
		return d
	}
	return max(d-lag, 0)
}

// clone returns a copy of res whose Rules are its own. (It names every field, not *res: a copy of
// *res would hand res.Rules to the heap in the compiler's eyes, and with it the middleware's
// stack buffer.)
func (res *Result) clone() Result {
	return Result{
		Allowed:    res.Allowed,
		Shadowed:   res.Shadowed,
		RetryAfter: res.RetryAfter,
		Delay:      res.Delay,
		Rules:      slices.Clone(res.Rules),
	}
}
