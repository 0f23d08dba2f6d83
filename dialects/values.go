package dialects

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// MaxDelay is the longest wait any dialect returns: a RetryAfter or Reset above it is clamped to it
// (24h, ratelimitheader.MaxDelay). The resets vendors document fit within it: GitHub's and
// Shopify's are within an hour, X's daily windows and Salesforce's rolling day within 24h. Windows
// are not waits and are not clamped; a window above 366 days is ignored.
const MaxDelay = ratelimitheader.MaxDelay

// maxWindow is the longest window a dialect accepts (366 days, so yearly quotas fit).
const maxWindow = 366 * 24 * time.Hour

// get returns the first value of key in h, or "". key must be canonical (as http.Header stores
// it), so the lookup neither canonicalizes nor allocates.
func get(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// has reports whether h carries key (canonical).
func has(h http.Header, key string) bool { return len(h[key]) > 0 }

// trimOWS removes optional whitespace (SP, HTAB) around s.
func trimOWS(s string) string { return ratelimitheader.TrimOWS(s) }

// parseCount parses a non-negative integer (digits only, optional whitespace around, fits int64).
func parseCount(s string) (int64, bool) {
	s = trimOWS(s)
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return 0, false
	}
	return int64(n), true
}

// firstElement returns the first comma-separated element of a header value without its
// ";"-parameters, trimmed ("100, 100;w=60" gives "100").
func firstElement(s string) string {
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return trimOWS(s)
}

// clampWait limits a wait to [0, MaxDelay].
func clampWait(d time.Duration) time.Duration {
	return min(max(d, 0), MaxDelay)
}

// base is the reference instant of a response: its Date header when valid, else now. Dates in
// reset fields are measured against it, which corrects for skew between server and client clocks.
func base(h http.Header, now time.Time) time.Time {
	if d := get(h, "Date"); d != "" {
		if t, ok := ratelimitheader.ParseHTTPDate(trimOWS(d)); ok {
			return t
		}
	}
	return now
}

// isoLayouts are the ISO 8601 / RFC 3339 forms accepted in reset fields, most common first.
// Atlassian writes minutes only ("2026-03-26T16:00Z"); a form without a zone is UTC.
var isoLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05Z07:00",
}

// jsDateLayout is JavaScript's Date.prototype.toString form, which some APIs send as a reset
// ("Tue Feb 16 2021 09:02:42 GMT+0100 (Central European Standard Time)"): the parenthesised zone
// name is dropped before parsing.
const jsDateLayout = "Mon Jan 02 2006 15:04:05 GMT-0700"

// parseDate parses a reset date: ISO 8601 / RFC 3339, an HTTP-date (RFC 9110), or JavaScript's
// Date string.
func parseDate(s string) (time.Time, bool) {
	s = trimOWS(s)
	if len(s) >= 10 && s[4] == '-' {
		for _, layout := range isoLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				return t, true
			}
		}
		return time.Time{}, false
	}
	if t, ok := ratelimitheader.ParseHTTPDate(s); ok {
		return t, true
	}
	if i := strings.IndexByte(s, '('); i > 0 {
		s = trimOWS(s[:i])
	}
	if t, err := time.Parse(jsDateLayout, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// parseReset reads a reset value in any form the wild uses: delta-seconds, fractional seconds, Unix
// seconds (above 1e9), Unix milliseconds (above 1e12), an ISO 8601 / RFC 3339 date, an HTTP-date or
// a JavaScript Date string. Instants are measured against the response's Date header (else now),
// an HTTP-date rounded up by its second (ratelimitheader.DateGrain, as Retry-After's). The result
// is clamped to [0, MaxDelay]. at is the instant named, on the server's clock and as written, when
// the value is one (a Unix time or a date); the zero Time for a delay (see Quota.ResetAt).
func parseReset(value string, h http.Header, now time.Time) (d time.Duration, at time.Time, ok bool) {
	value = trimOWS(value)
	if value == "" {
		return 0, time.Time{}, false
	}
	if len(value) < 10 || value[4] != '-' {
		if d, at, ok := ratelimitheader.ParseResetAt(value, get(h, "Date"), now); ok {
			return d, at.UTC(), true
		}
	}
	if t, ok := ratelimitheader.ParseHTTPDate(value); ok {
		// Whole seconds: the instant meant lies up to a second after the date (DateGrain).
		d := t.Sub(base(h, now)) // saturates far from the present
		if d < MaxDelay {
			d += ratelimitheader.DateGrain
		}
		return clampWait(d), t.UTC(), true
	}
	t, ok := parseDate(value)
	if !ok {
		return 0, time.Time{}, false
	}
	return clampWait(t.Sub(base(h, now))), t.UTC(), true
}

// parseSecondsValue reads a non-negative decimal number of seconds ("64.57"), rounded up to the
// next nanosecond and clamped to [0, MaxDelay]; unlike parseReset it never reads an epoch.
func parseSecondsValue(value string) (time.Duration, bool) {
	value = trimOWS(value)
	if value == "" || value[0] < '0' || value[0] > '9' {
		return 0, false
	}
	// Retry-After's delay-seconds reading: decimals tolerated, rounded up, clamped; never a date
	// here, because the value starts with a digit.
	return ratelimitheader.ParseRetryAfter(value, "", time.Time{})
}

// parseMillis reads a non-negative decimal number of milliseconds ("1500", "1500.5"), rounded up
// to the next millisecond and clamped to [0, MaxDelay].
func parseMillis(value string) (time.Duration, bool) {
	value = trimOWS(value)
	whole, frac, hasFrac := strings.Cut(value, ".")
	ms, ok := parseCount(whole)
	if !ok {
		return 0, false
	}
	if hasFrac {
		if frac == "" || strings.Trim(frac, "0123456789") != "" {
			return 0, false
		}
		if strings.Trim(frac, "0") != "" {
			ms++
		}
	}
	if ms >= int64(MaxDelay/time.Millisecond) {
		return MaxDelay, true
	}
	return time.Duration(ms) * time.Millisecond, true
}

// parseGoDuration reads a duration as Go's time.Duration.String writes it and OpenAI sends it
// ("1s", "6m0s", "20ms", "1m30.5s"), or failing that a plain decimal number of seconds. Signs are
// refused; the result is rounded as parsed and clamped to [0, MaxDelay].
func parseGoDuration(value string) (time.Duration, bool) {
	value = trimOWS(value)
	if value == "" || value[0] < '0' || value[0] > '9' {
		return 0, false
	}
	if d, err := time.ParseDuration(value); err == nil {
		return clampWait(d), true
	}
	if strings.Contains(value, "h") || strings.Contains(value, "m") || strings.Contains(value, "s") {
		// An overflowing or malformed duration ("9999999999h"): clamp only what clearly is one.
		return 0, false
	}
	return parseSecondsValue(value)
}

// validWindow reports whether w is a window a quota may declare: positive, at most 366 days.
func validWindow(w time.Duration) bool { return w > 0 && w <= maxWindow }

// retryAfter reads the server's explicit wait: retry-after-ms and x-ms-retry-after-ms
// (milliseconds, as Azure and OpenAI's SDKs read them), then Retry-After (delay-seconds, decimals
// tolerated, or an HTTP-date measured against Date).
func retryAfter(h http.Header, now time.Time) (d, grain time.Duration, ok bool) {
	for _, k := range [...]string{"Retry-After-Ms", "X-Ms-Retry-After-Ms"} {
		if v := get(h, k); v != "" {
			if d, ok := parseMillis(v); ok {
				return d, 0, true
			}
		}
	}
	if d, ok = ratelimitheader.RetryAfter(h, now); ok {
		if v := trimOWS(get(h, "Retry-After")); v != "" && (v[0] < '0' || v[0] > '9') {
			grain = ratelimitheader.DateGrain // an HTTP-date, read rounded up by its second
		}
	}
	return d, grain, ok
}
