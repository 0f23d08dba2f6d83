package dialects

import (
	"net/http"
	"time"
)

// twitter reads X's (Twitter's) API.
//
// Source: X developer docs, "Rate limits" (https://docs.x.com/fundamentals/rate-limits, and
// https://developer.x.com/en/docs/twitter-api/rate-limits): "Every API response includes headers
// showing your current rate limit status", example
//
//	x-rate-limit-limit: 900
//	x-rate-limit-remaining: 847
//	x-rate-limit-reset: 1705420800
//
// with x-rate-limit-reset "Unix timestamp when the limit resets", and a 429 Too Many Requests when
// a limit is exceeded. Windows are "Most limits reset every 15 minutes" (some 24 hours): not sent,
// so Window stays unknown; Reset is exact.
//
// Recognised by the X-Rate-Limit-* spelling (with the dash), which X documents; the reading is the
// generic one of that triple (a reset above 1e9 is a Unix time, measured against Date).
type twitter struct{}

// Name returns "twitter".
func (twitter) Name() string { return "twitter" }

// Read reads the x-rate-limit-* triple; ok is false without it.
func (twitter) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(twitter{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (twitter) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	q, ok := tripleQuota(resp.Header, &xRateDashLimitKeys, now)
	if !ok {
		return Reading{}, false
	}
	r := Reading{Dialect: "twitter", Quotas: append(quotas, q)}
	return r, true
}
