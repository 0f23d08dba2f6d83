package dialects

import (
	"net/http"
	"time"
)

// openAI reads OpenAI's API (and the APIs that copy its headers: Azure OpenAI, Groq, ...).
//
// Source: OpenAI platform docs, "Rate limits" guide (https://platform.openai.com/docs/guides/rate-limits),
// section "Rate limits in headers", table of fields with sample values:
//
//	x-ratelimit-limit-requests      60      The maximum number of requests that are permitted before exhausting the rate limit.
//	x-ratelimit-limit-tokens        150000  The maximum number of tokens that are permitted before exhausting the rate limit.
//	x-ratelimit-remaining-requests  59      The remaining number of requests that are permitted before exhausting the rate limit.
//	x-ratelimit-remaining-tokens    149984  The remaining number of tokens that are permitted before exhausting the rate limit.
//	x-ratelimit-reset-requests      1s      The time until the rate limit (based on requests) resets to its initial state.
//	x-ratelimit-reset-tokens        6m0s    The time until the rate limit (based on tokens) resets to its initial state.
//
// (The official page was not in the search index; the table above is quoted from a diff of it,
// https://spybara.com/openai/api/history/docs/en/2026-06-24-2202..2026-06-26-1757/, and matches
// headers users quote from real responses on community.openai.com: "x-ratelimit-reset-requests:
// 12ms", "x-ratelimit-reset-tokens: 9ms", plus "x-ratelimit-limit-tokens_usage_based".)
//
// Resets are Go-style durations ("1s", "6m0s", "12ms", "1m30.5s"), parsed with time.ParseDuration;
// a bare number is read as seconds (some OpenAI-compatible servers send one). OpenAI documents its
// limits as RPM and TPM (requests and tokens per minute), replenished continuously: Window is one
// minute and Continuous true, an inference from the docs, not a header. Quotas: requests, then
// tokens, then tokens_usage_based.
//
// Recognised by any x-ratelimit-{limit,remaining,reset}-{requests,tokens} header.
type openAI struct{}

// Name returns "openai".
func (openAI) Name() string { return "openai" }

// openAIFamilies are the quota suffixes OpenAI sends, in Quotas order.
var openAIFamilies = [...]struct {
	name                    string
	unit                    Unit
	limit, remaining, reset string
}{
	{"requests", UnitRequests, "X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
	{"tokens", UnitTokens, "X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
	{"tokens_usage_based", UnitTokens, "X-Ratelimit-Limit-Tokens_usage_based", "X-Ratelimit-Remaining-Tokens_usage_based", "X-Ratelimit-Reset-Tokens_usage_based"},
}

// openAIWindow is the period of OpenAI's RPM and TPM limits.
const openAIWindow = time.Minute

// Read reads the OpenAI families; ok is false when none is present.
func (openAI) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(openAI{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (openAI) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	r := Reading{Dialect: "openai", Quotas: quotas}
	for _, f := range openAIFamilies {
		lv, rv, tv := get(h, f.limit), get(h, f.remaining), get(h, f.reset)
		if lv == "" && rv == "" && tv == "" {
			continue
		}
		q := Quota{Name: f.name, Unit: f.unit, Window: openAIWindow, Continuous: true}
		if n, ok := parseCount(lv); ok && n > 0 {
			q.Limit = n
		}
		q.Remaining, q.HasRemaining = parseCount(rv)
		q.Reset, q.HasReset = parseGoDuration(tv)
		r.Quotas = append(r.Quotas, q)
	}
	if len(r.Quotas) == 0 {
		return Reading{}, false
	}
	return r, true
}
