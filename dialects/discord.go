package dialects

import (
	"net/http"
	"strings"
	"time"
)

// discord reads Discord's API.
//
// Source: Discord developer docs, "Rate Limits" (https://discord.com/developers/docs/topics/rate-limits,
// now https://docs.discord.com/developers/topics/rate-limits), section "Header Format", whose
// example is
//
//	X-RateLimit-Limit: 5
//	X-RateLimit-Remaining: 0
//	X-RateLimit-Reset: 1470173023
//	X-RateLimit-Reset-After: 1
//	X-RateLimit-Bucket: abcd1234
//
// with X-RateLimit-Reset "Epoch time (seconds since 00:00:00 UTC on January 1, 1970) at which the
// rate limit resets" (decimals allowed), X-RateLimit-Reset-After "Total time (in seconds) of when
// the current rate limit bucket will reset. Can have decimals to match previous millisecond
// ratelimit precision", X-RateLimit-Bucket "A unique string denoting the rate limit being
// encountered", and, on 429s only, X-RateLimit-Global ("Returned only on HTTP 429 responses if the
// rate limit encountered is the global rate limit (not per-route)") and X-RateLimit-Scope ("user",
// "global" or "shared"), plus Retry-After.
//
// Reset prefers Reset-After (relative: no clock skew) over Reset. On a 429 the wait is the longer
// of Retry-After and Reset-After, so a client is never early. A global limit (X-RateLimit-Global:
// true or X-RateLimit-Scope: global) has Scope ScopeGlobal: it pauses every route of the host.
// Discord's per-route windows are not sent: Window stays unknown.
//
// Recognised by X-RateLimit-Bucket, X-RateLimit-Reset-After, X-RateLimit-Global or
// X-RateLimit-Scope, which no other dialect sends.
type discord struct{}

// Name returns "discord".
func (discord) Name() string { return "discord" }

// Read reads the Discord headers; ok is false without any of the four that are Discord's own.
func (discord) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(discord{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (discord) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	bucket, after := get(h, "X-Ratelimit-Bucket"), get(h, "X-Ratelimit-Reset-After")
	global, scope := get(h, "X-Ratelimit-Global"), get(h, "X-Ratelimit-Scope")
	if bucket == "" && after == "" && global == "" && scope == "" {
		return Reading{}, false
	}
	r := Reading{Dialect: "discord", Quotas: quotas, Bucket: trimOWS(bucket)}
	q, found := tripleQuota(h, &xRateLimitKeys, now)
	resetAfter, hasAfter := parseSecondsValue(after)
	if hasAfter {
		q.Reset, q.HasReset, q.ResetGrain, found = resetAfter, true, 0, true
	}
	if found {
		r.Quotas = append(r.Quotas, q)
	}
	if strings.EqualFold(trimOWS(global), "true") || strings.EqualFold(trimOWS(scope), "global") {
		r.Scope = ScopeGlobal
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		r.Throttled = true
		ra, grain, ok := retryAfter(h, now)
		if hasAfter && (!ok || resetAfter > ra) {
			ra, grain, ok = resetAfter, 0, true
		}
		r.RetryAfter, r.RetryAfterGrain, r.HasRetryAfter = ra, grain, ok
	}
	return r, true
}
