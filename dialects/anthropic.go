package dialects

import (
	"net/http"
	"time"
)

// anthropic reads Anthropic's API.
//
// Source: Anthropic docs, "Rate limits" (https://docs.anthropic.com/en/api/rate-limits), section
// "Response headers" ("The API response includes headers that show you the rate limit enforced,
// current usage, and when the limit will be reset"):
//
//	retry-after                                 The number of seconds to wait until you can retry the request.
//	anthropic-ratelimit-requests-limit          The maximum number of requests allowed within any rate limit period.
//	anthropic-ratelimit-requests-remaining      The number of requests remaining before being rate limited.
//	anthropic-ratelimit-requests-reset          The time when the request rate limit will be fully replenished, provided in RFC 3339 format.
//	anthropic-ratelimit-tokens-{limit,remaining,reset}         (the most restrictive token limit)
//	anthropic-ratelimit-input-tokens-{limit,remaining,reset}
//	anthropic-ratelimit-output-tokens-{limit,remaining,reset}
//
// Example values from a recorded response (tidyllm's test fixture of api.anthropic.com, Aug 2025):
// anthropic-ratelimit-requests-limit: 1000, -remaining: 999, -reset: 2025-08-21T12:40:59Z.
//
// The same page says limits are per minute (RPM, ITPM, OTPM) and enforced with the token bucket
// algorithm, capacity "continuously replenished up to your maximum limit": Window is one minute
// and Continuous true (an inference from the docs). Resets are instants, measured against the
// response's Date header. Quotas: requests, tokens, input-tokens, output-tokens.
//
// Recognised by any anthropic-ratelimit-* header of those four families.
type anthropic struct{}

// Name returns "anthropic".
func (anthropic) Name() string { return "anthropic" }

var anthropicFamilies = [...]struct {
	name                    string
	unit                    Unit
	limit, remaining, reset string
}{
	{"requests", UnitRequests, "Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
	{"tokens", UnitTokens, "Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
	{"input-tokens", UnitInputTokens, "Anthropic-Ratelimit-Input-Tokens-Limit", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
	{"output-tokens", UnitOutputTokens, "Anthropic-Ratelimit-Output-Tokens-Limit", "Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
}

// anthropicWindow is the period of Anthropic's RPM, ITPM and OTPM limits.
const anthropicWindow = time.Minute

// Read reads the Anthropic families; ok is false when none is present.
func (anthropic) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(anthropic{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (anthropic) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	r := Reading{Dialect: "anthropic", Quotas: quotas}
	for _, f := range anthropicFamilies {
		lv, rv, tv := get(h, f.limit), get(h, f.remaining), get(h, f.reset)
		if lv == "" && rv == "" && tv == "" {
			continue
		}
		q := Quota{Name: f.name, Unit: f.unit, Window: anthropicWindow, Continuous: true}
		if n, ok := parseCount(lv); ok && n > 0 {
			q.Limit = n
		}
		q.Remaining, q.HasRemaining = parseCount(rv)
		if t, ok := parseDate(tv); ok {
			q.Reset, q.HasReset = clampWait(t.Sub(base(h, now))), true
		}
		r.Quotas = append(r.Quotas, q)
	}
	if len(r.Quotas) == 0 {
		return Reading{}, false
	}
	return r, true
}
