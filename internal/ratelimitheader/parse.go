package ratelimitheader

import (
	"net/http"
	"strings"
	"time"
)

// Info is what a response says about the client's quota. Zero and false fields mean "not said".
// An Info is a plain value: copy it freely.
type Info struct {
	Policy        string        // policy name from RateLimit-Policy / RateLimit, "" if none
	Limit         int64         // quota per Window; 0 = unknown
	Window        time.Duration // quota window; 0 = unknown (a window above 366 days is ignored)
	Remaining     int64         // requests left in the current window (valid when HasRemaining)
	HasRemaining  bool          // a Remaining value was sent
	Reset         time.Duration // time until the quota resets, relative to the response
	HasReset      bool          // a Reset value was sent
	RetryAfter    time.Duration // the Retry-After delay (valid when HasRetryAfter)
	HasRetryAfter bool          // a valid Retry-After was sent
}

// legacy is one of the pre-standard dialects: three headers with plain numbers.
type legacy struct {
	limit, remaining, reset string
}

// legacyDialects lists the pre-standard dialects in order of preference.
var legacyDialects = [...]legacy{
	{HeaderXLimit, HeaderXRemaining, HeaderXReset},
	{headerXDashLimit, headerXDashRemaining, headerXDashReset},
	{headerOldLimit, headerOldRemaining, headerOldReset},
}

// Parse reads every dialect from a response header, preferring the IETF draft fields:
//
//	RateLimit-Policy: "default";q=100;w=60
//	RateLimit: "default";r=42;t=17
//
// (structured fields parsed with github.com/dunglas/httpsfv; both are lists, and the RateLimit member
// whose name matches a policy is used, else the first member of each), then X-RateLimit-Limit /
// Remaining / Reset, X-Rate-Limit-*, RateLimit-Limit / Remaining / Reset (older drafts, where a limit
// such as "100, 100;w=60" also gives the window), and Retry-After. Each field of Info is taken from the
// first dialect that states it validly.
//
// A Reset larger than 1e9 is a Unix time in seconds (GitHub style), one larger than 1e12 a Unix time in
// milliseconds, measured against the response's Date header, else now; otherwise it is delta-seconds. The legacy dialects accept fractional seconds
// ("1.5"). Malformed, negative or absurd values are ignored field by field, durations are clamped to
// [0, MaxDelay]; Parse never panics and never fails. A header without any rate-limit field costs one
// pass over its keys (a dozen lookups when it has many) and no allocation. Only canonical header
// keys are read, as http.Header stores them.
func Parse(h http.Header, now time.Time) Info {
	var info Info
	if !mayHaveFields(h) {
		return info
	}
	clk := clock{date: first(h, headerDate), now: now}

	policyValues, limitValues := h[HeaderRateLimitPolicy], h[HeaderRateLimit]
	if len(policyValues) > 0 || len(limitValues) > 0 {
		d := parseDraft(policyValues, limitValues, &clk)
		info.Policy = d.policy
		info.Limit, info.Window = d.limit, d.window
		if d.limitItem.hasRemaining {
			info.Remaining, info.HasRemaining = d.limitItem.remaining, true
		}
		if d.limitItem.hasReset {
			info.Reset, info.HasReset = d.limitItem.reset, true
		}
	}

	for i := range legacyDialects {
		if info.Limit > 0 && info.HasRemaining && info.HasReset {
			break
		}
		parseLegacy(h, &legacyDialects[i], &clk, &info)
	}

	if v := first(h, HeaderRetryAfter); v != "" {
		info.RetryAfter, info.HasRetryAfter = ParseRetryAfter(v, clk.date, now)
	}
	return info
}

// scanBelow is the number of header keys up to which mayHaveFields scans the keys rather than
// looking every field name up: a typical response has a handful of headers, and one pass over them
// is cheaper than the dozen lookups of Parse.
const scanBelow = 12

// mayHaveFields reports whether h may hold a field Parse reads: false only when h is small and none
// of its keys starts like one (Ratelimit*, X-Ratelimit-*, X-Rate-Limit-*, Retry-After).
func mayHaveFields(h http.Header) bool {
	if len(h) >= scanBelow {
		return true
	}
	for k := range h {
		if len(k) >= len("Ratelimit") && (k[0] == 'R' || k[0] == 'X') {
			if strings.HasPrefix(k, HeaderRateLimit) || strings.HasPrefix(k, "X-Rate") || k == HeaderRetryAfter {
				return true
			}
		}
	}
	return false
}

// parseLegacy fills the fields of info that are still unknown from one legacy dialect.
func parseLegacy(h http.Header, d *legacy, clk *clock, info *Info) {
	if info.Limit == 0 {
		if v := first(h, d.limit); v != "" {
			elem, _ := firstElement(v)
			if n, ok := parseCount(elem); ok && n > 0 {
				info.Limit = n
				if info.Window == 0 {
					info.Window, _ = legacyWindow(v, n)
				}
			}
		}
	}
	if !info.HasRemaining {
		if v := first(h, d.remaining); v != "" {
			elem, _ := firstElement(v)
			info.Remaining, info.HasRemaining = parseCount(elem)
		}
	}
	if !info.HasReset {
		if v := first(h, d.reset); v != "" {
			elem, _ := firstElement(v)
			if sec, nsec, ok := parseSeconds(elem); ok {
				info.Reset, _ = clk.reset(sec, nsec)
				info.HasReset = true
			}
		}
	}
}
