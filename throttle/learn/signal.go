package learn

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/dialects"
)

// Signal is one attempt's outcome as the learner reads it: when it left and came back, whether the
// server throttled it, and what the server declared about its quota. Times are on the learner's
// integer clock (nanoseconds); zero and false fields mean "not said". A Signal is a plain value.
type Signal struct {
	Sent, Answered int64 // when the attempt left, and when its outcome came back
	Failed         bool  // no response: a transport error teaches nothing about the quota
	Throttled      bool  // a throttle status (429 by default)
	// Bare is set on a 429 that declares no quota of any kind and names no global limit: a
	// refusal that says nothing of what refused it (a proxy's in front of the API, say).
	Bare bool

	Limit        int64 // declared quota per Window (0: not said)
	Window       int64 // declared window in nanoseconds (0: not said)
	Remaining    int64 // quota left when the server answered (valid when HasRemaining)
	HasRemaining bool
	Reset        int64 // time from the answer until the quota is restored (valid when HasReset)
	HasReset     bool
	ResetGrain   int64 // how much Reset may overstate the true time (its unit's rounding)
	// ResetAt is the instant the server named as the reset, in Unix nanoseconds on its own clock,
	// when it wrote one (an epoch or a date; 0 for a delay): answers that name the same reset
	// carry the same ResetAt exactly (dialects.Quota.ResetAt).
	ResetAt int64
	// WindowAssumed reports that Window is the dialect's documented guess, not the server's word.
	WindowAssumed bool
	// RateAssumed reports that Limit per Window is the dialect's documented guess at the rate of
	// a quota that refills continuously, of which the server says only the level (Remaining of
	// Limit): Shopify's call limit. The learner measures the rate from the levels.
	RateAssumed bool
	// Continuous reports that the quota refills continuously at Limit per Window and that Reset
	// is the time until it is whole again (OpenAI, Anthropic): Remaining plus what refills in
	// Reset is then the quota's capacity.
	Continuous bool
	RetryAfter int64 // the server asked for this much quiet (valid when HasRetryAfter)
	HasRetry   bool

	// The declared quota of other units than requests that a request's cost counts against
	// (tokens, points; see unitsOf): per UnitWindow, with UnitRemaining left when the server
	// answered; UnitContinuous when it refills continuously.
	UnitLimit, UnitWindow int64
	UnitRemaining         int64 // valid when HasUnitRemaining
	HasUnitRemaining      bool
	UnitContinuous        bool
}

// quiet reports whether the signal says nothing but that the attempt came back (or failed): no
// throttle, no declared field, no Retry-After.
func (s *Signal) quiet() bool {
	return *s == Signal{Sent: s.Sent, Answered: s.Answered, Failed: s.Failed}
}

// headers reports whether the signal carries any declared quota field.
func (s *Signal) headers() bool { return s.Limit > 0 || s.HasRemaining }

// readSignal turns one attempt into a Signal, reading the response in the dialect of the API that
// sent it (package dialects: IETF fields, X-RateLimit-*, GitHub, OpenAI, Anthropic, Shopify,
// Discord, ...). now is the answer's wall time, used to resolve absolute resets and dates. A
// throttle is a status of statuses or whatever the dialect calls one (GitHub's 403 with nothing
// left). The requests quota and the quota of other units a request's cost counts against (tokens,
// points: unitsOf) are the ones the learner paces by; a quota of other units that is used up holds
// the key until it comes back, as a Retry-After would, when it comes back whole or a request was
// refused for it.
func readSignal(sent, answered int64, now time.Time, resp *http.Response, err error, statuses []int, rd *dialects.Reader) Signal {
	var s Signal
	s.read(sent, answered, now, resp, err, statuses, rd, nil)
	return s
}

// read is readSignal into s, in place (the learner's signal is read on every answer: a Signal
// returned by value is copied once more), with the quotas the response declares stored in quotas's
// array (dialects.ReadInto): the learner's own, so that an answer that declares a quota allocates
// nothing for it. The reading itself stays on the stack, which writes to it cost nothing.
func (s *Signal) read(sent, answered int64, now time.Time, resp *http.Response, err error, statuses []int, rd *dialects.Reader, quotas []dialects.Quota) {
	*s = Signal{Sent: sent, Answered: answered}
	if err != nil || resp == nil {
		s.Failed = true
		return
	}
	for _, st := range statuses {
		if resp.StatusCode == st {
			s.Throttled = true
		}
	}
	var r dialects.Reading
	if rd != nil {
		r = rd.ReadInto(quotas, resp, now)
	} else {
		r = dialects.ReadInto(quotas, resp, now)
	}
	s.Throttled = s.Throttled || r.Throttled
	if resp.StatusCode >= 400 {
		// A Retry-After on a success (a 202's polling hint) asks for no pause.
		s.RetryAfter, s.HasRetry = int64(r.RetryAfter), r.HasRetryAfter
	}
	if len(r.Quotas) == 0 {
		s.Bare = s.Throttled && resp.StatusCode == http.StatusTooManyRequests && r.Scope != dialects.ScopeGlobal
		return // the common answer: no quota declared
	}
	if q, ok := r.QuotaOf(dialects.UnitRequests); ok {
		s.Limit, s.Window = q.Limit, int64(q.Window)
		// A documented window filled in for a quota that comes back at its reset is a guess the
		// resets can correct (see declaredStrategy); a refilling one's reset is its level's.
		s.WindowAssumed = q.WindowAssumed && !q.Continuous
		s.RateAssumed = q.WindowAssumed && q.Continuous
		s.Continuous = q.Continuous
		s.Remaining, s.HasRemaining = max(q.Remaining, 0), q.HasRemaining
		s.Reset, s.HasReset = int64(q.Reset), q.HasReset
		s.ResetGrain = int64(q.ResetGrain)
		if !q.ResetAt.IsZero() {
			s.ResetAt = q.ResetAt.UnixNano()
		}
	}
	if q, ok := unitsOf(r); ok {
		s.UnitLimit, s.UnitWindow, s.UnitContinuous = q.Limit, int64(q.Window), q.Continuous
		s.UnitRemaining, s.HasUnitRemaining = max(q.Remaining, 0), q.HasRemaining
	}
	// A spent quota of other units holds until its reset when it comes back whole then (GitHub's
	// GraphQL points), or when the server refused the request for it. One that refills
	// continuously (OpenAI's and Anthropic's tokens) and was spent by an admitted request is paced
	// instead: its units lane spaces the next request by its cost (its reset is the time until it
	// is whole again, a window's wait for a quota that lets the next request in long before).
	if q, ok := r.Exhausted(); ok && q.Unit != dialects.UnitRequests && q.HasReset && (!q.Continuous || s.Throttled) &&
		int64(q.Reset) > s.RetryAfter {
		s.RetryAfter, s.HasRetry = int64(q.Reset), true
	}
}

// unitsOf is the quota of other units than requests that a request's cost (request.WithCost)
// counts against: the first the reading declares that is not a count of requests or of requests
// in flight, such as OpenAI's tokens, Anthropic's tokens (the most restrictive of its token
// limits, sent before input-tokens and output-tokens), GitHub's GraphQL points.
func unitsOf(r dialects.Reading) (dialects.Quota, bool) {
	for _, q := range r.Quotas {
		if q.Unit != dialects.UnitRequests && q.Unit != dialects.UnitConcurrentRequests && (q.Limit > 0 || q.HasRemaining) {
			return q, true
		}
	}
	return dialects.Quota{}, false
}
