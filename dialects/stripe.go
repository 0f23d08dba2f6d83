package dialects

import (
	"net/http"
	"strings"
	"time"
)

// stripe reads Stripe's API.
//
// Sources: Stripe's API libraries, which honour a Stripe-Should-Retry response header ("true"
// forces a retry, "false" forbids it, whatever the status: stripe-python #621 "Implement support
// for stripe-should-retry and retry-after headers", stripe-php #755 "Respect Stripe-Should-Retry
// and Retry-After headers", both after stripe-node #692), and Stripe's docs "Rate limits"
// (https://docs.stripe.com/rate-limits): a rate-limited request gets 429, with no quota headers,
// and every response carries a Request-Id ("req_...") header.
//
// Stripe-Should-Retry: true gives RetryAllowed, false RetryForbidden (case-insensitive); a 429 is a
// throttle like everywhere. Stripe sends no quota: Quotas stay empty.
//
// Recognised by Stripe-Should-Retry, or by a Request-Id that starts with "req_".
type stripe struct{}

// Name returns "stripe".
func (stripe) Name() string { return "stripe" }

// Read reads Stripe-Should-Retry; ok is false for a response that is not Stripe's.
func (stripe) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(stripe{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (stripe) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	v := trimOWS(get(h, "Stripe-Should-Retry"))
	if v == "" && !strings.HasPrefix(get(h, "Request-Id"), "req_") {
		return Reading{}, false
	}
	r := Reading{Dialect: "stripe", Quotas: quotas}
	switch {
	case strings.EqualFold(v, "true"):
		r.Retry = RetryAllowed
	case strings.EqualFold(v, "false"):
		r.Retry = RetryForbidden
	}
	return r, true
}
