package dialects

import "time"

// Reading is what one response says about rate limits, read as the API that sent it means it.
// Zero and false fields mean "not said". A Reading is a plain value: copy it freely (Quotas is
// a fresh slice per reading, but for ReadInto's, which are in the caller's array).
type Reading struct {
	// Dialect is the name of the dialect that read the response: "ietf", "x-ratelimit", "github",
	// "openai", "anthropic", "shopify", "discord", "twitter", "azure", "stripe", "salesforce" or a
	// user dialect's name; "" when none recognised it (Throttled and RetryAfter are still read).
	Dialect string
	// Throttled reports whether the response is a throttle: 429 (or a status configured with
	// [WithThrottleStatus]), a GitHub 403 with nothing remaining or a secondary limit, a Salesforce
	// 403 with the daily limit used up. A throttle is never a final failure: wait and retry.
	Throttled bool
	// Quotas are the declared quotas. The first is the one the response is about, requests before
	// other units (OpenAI: requests, then tokens); [Reading.Exhausted] finds the one used up.
	Quotas []Quota
	// RetryAfter is how long to wait before the next request (valid when HasRetryAfter): Retry-After,
	// retry-after-ms, x-ms-retry-after-ms, Discord's reset-after on a 429, GitHub's reset on an
	// exhausted primary limit, GitHub's one-minute minimum for a secondary limit without
	// retry-after. Clamped to [0, MaxDelay].
	RetryAfter time.Duration
	// HasRetryAfter reports whether RetryAfter was said (or, for GitHub, documented).
	HasRetryAfter bool
	// RetryAfterGrain is how much RetryAfter may overstate the wait the server meant: an
	// HTTP-date is read rounded up by its second (ratelimitheader.DateGrain), GitHub's reset of a
	// spent quota by its grain (Quota.ResetGrain); 0 for delay-seconds and milliseconds. A bound
	// on the waits a client accepts compares RetryAfter less it: a date a whole bound away (a
	// minute's window said as its end) reads as the bound and a second.
	RetryAfterGrain time.Duration
	// Retry is the server's permission to retry: RetryUnspecified unless the API says (Stripe's
	// Stripe-Should-Retry).
	Retry RetryPermission
	// Scope is what a throttle pauses: ScopeKey (the key or route) unless the API says the limit is
	// global to the host (Discord's X-RateLimit-Global / X-RateLimit-Scope: global).
	Scope Scope
	// Bucket is the quota's own bucket within the host: Discord's X-RateLimit-Bucket, GitHub's
	// x-ratelimit-resource (core, search, graphql...); "" if none.
	Bucket string
}

// Unit is what a quota counts. The zero value is UnitRequests.
type Unit int

// Units of quotas.
const (
	// UnitRequests counts requests (the zero value).
	UnitRequests Unit = iota
	// UnitTokens counts LLM tokens, input and output together.
	UnitTokens
	// UnitInputTokens counts LLM input (prompt) tokens.
	UnitInputTokens
	// UnitOutputTokens counts LLM output (completion) tokens.
	UnitOutputTokens
	// UnitPoints counts points or cost units (GitHub GraphQL points).
	UnitPoints
	// UnitBytes counts content bytes (IETF qu="content-bytes").
	UnitBytes
	// UnitConcurrentRequests counts requests in flight (IETF qu="concurrent-requests"): a limit
	// on concurrency, not a rate.
	UnitConcurrentRequests
	// UnitOther is a unit the dialect does not know.
	UnitOther
)

// String returns the unit's name: "requests", "tokens", "input-tokens", "output-tokens",
// "points", "content-bytes", "concurrent-requests" or "other".
func (u Unit) String() string {
	switch u {
	case UnitRequests:
		return "requests"
	case UnitTokens:
		return "tokens"
	case UnitInputTokens:
		return "input-tokens"
	case UnitOutputTokens:
		return "output-tokens"
	case UnitPoints:
		return "points"
	case UnitBytes:
		return "content-bytes"
	case UnitConcurrentRequests:
		return "concurrent-requests"
	}
	return "other"
}

// RetryPermission is what the server says about retrying the request. The zero value is
// RetryUnspecified.
type RetryPermission int

// Retry permissions.
const (
	// RetryUnspecified: the server said nothing; the caller's policy decides.
	RetryUnspecified RetryPermission = iota
	// RetryAllowed: the server says a retry may succeed (Stripe-Should-Retry: true).
	RetryAllowed
	// RetryForbidden: the server says a retry will not succeed (Stripe-Should-Retry: false).
	RetryForbidden
)

// String returns "unspecified", "allowed" or "forbidden".
func (p RetryPermission) String() string {
	switch p {
	case RetryAllowed:
		return "allowed"
	case RetryForbidden:
		return "forbidden"
	}
	return "unspecified"
}

// Scope is what a throttle applies to. The zero value is ScopeKey.
type Scope int

// Scopes.
const (
	// ScopeKey: the throttle applies to the key (or route) that saw it (the zero value).
	ScopeKey Scope = iota
	// ScopeGlobal: the throttle applies to every request to the host (Discord's global limit).
	ScopeGlobal
)

// String returns "key" or "global".
func (s Scope) String() string {
	if s == ScopeGlobal {
		return "global"
	}
	return "key"
}

// Quota is one declared quota: Limit units per Window, of which Remaining are left until Reset.
type Quota struct {
	// Name is the policy or quota name as sent ("requests", "tokens", an IETF policy name, a
	// GitHub resource), may be "".
	Name string
	// Unit is what the quota counts.
	Unit Unit
	// Limit is the quota per Window; 0 unknown.
	Limit int64
	// Window is the quota's period; 0 unknown. Where the API documents the period but does not
	// send it (OpenAI and Anthropic per minute, Shopify's bucket, GitHub's hourly core limit,
	// Salesforce's daily one) the dialect fills it in and says so in its file.
	Window time.Duration
	// WindowAssumed reports that Window is the vendor's documented period, filled in by the
	// dialect, not sent by the server: a server speaking the dialect may have another.
	WindowAssumed bool
	// Remaining is what is left (valid when HasRemaining). Never negative.
	Remaining int64
	// HasRemaining reports whether Remaining was said.
	HasRemaining bool
	// Reset is the time until the quota resets (or, for a bucket, until it is full again as the
	// vendor defines it), relative to the response, clamped to [0, MaxDelay] (valid when
	// HasReset).
	Reset time.Duration
	// HasReset reports whether Reset was said.
	HasReset bool
	// ResetAt is the instant the server named as the reset, on its own clock and as written,
	// when it wrote one (a Unix time or a date: X-RateLimit-Reset, GitHub's); the zero Time for
	// a delay. Two answers name the same reset exactly when their ResetAt are equal, where their
	// Resets, measured against a Date header truncated to the second, differ by up to a second.
	ResetAt time.Time
	// ResetGrain is how much Reset may overstate the true time, from the unit it was written in:
	// a second for whole seconds (servers round the instant up), two for a Unix time in seconds
	// measured against the Date header (truncated to the second), 0 when the value carried a
	// fraction or milliseconds, or is unknown. A client inferring a window from the longest Reset
	// takes it off.
	ResetGrain time.Duration
	// Continuous reports whether the vendor documents the quota as refilled continuously (a token
	// or leaky bucket: OpenAI, Anthropic, Shopify) rather than all at once at Reset.
	Continuous bool
}

// Exhausted returns the first quota with nothing remaining: on a throttle, usually the one that
// caused it (an OpenAI 429 for tokens has requests left and tokens used up).
func (r Reading) Exhausted() (Quota, bool) {
	for _, q := range r.Quotas {
		if q.HasRemaining && q.Remaining == 0 {
			return q, true
		}
	}
	return Quota{}, false
}

// QuotaOf returns the first quota counting unit u.
func (r Reading) QuotaOf(u Unit) (Quota, bool) {
	for _, q := range r.Quotas {
		if q.Unit == u {
			return q, true
		}
	}
	return Quota{}, false
}
