package dialects

import (
	"net/http"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// xRateLimit reads the generic X-RateLimit-Limit / X-RateLimit-Remaining / X-RateLimit-Reset
// triple, and the X-Rate-Limit-* spelling when forced (recognised, that spelling is X's: see
// twitter).
//
// There is no specification: each API documents its own reset form, and all of these are read:
// delta-seconds ("X-RateLimit-Reset: 60", as statbot's and guilds.me's docs say), fractional
// seconds, Unix seconds (GitHub, X, layerfi: "a UTC timestamp (in seconds)"), Unix milliseconds,
// an ISO 8601 / RFC 3339 date (Atlassian's X-RateLimit-Reset: "yyyy-MM-ddTHH:mmZ"), an HTTP-date,
// and JavaScript's Date string (lemlist's docs: "X-RateLimit-Reset": "Tue Feb 16 2021 09:02:42
// GMT+0100 (Central European Standard Time)"). A number above 1e9 is a Unix time, above 1e12 one
// in milliseconds; dates and Unix times are measured against the response's Date header.
//
// X-RateLimit-Limit may carry the older IETF policy syntax ("100, 100;w=60"), which gives the
// Window. X-RateLimit-Used (GitHub's) stands in for Remaining when that is missing, and
// X-RateLimit-Retry-After (MailerLite's docs: "Indicates the seconds remaining before you can make
// a new request") for Retry-After.
type xRateLimit struct{}

// Name returns "x-ratelimit".
func (xRateLimit) Name() string { return "x-ratelimit" }

// Read reads the triple; ok is false when no member of it (in either spelling) is present.
func (xRateLimit) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(xRateLimit{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (xRateLimit) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	q, ok := tripleQuota(h, &xRateLimitKeys, now)
	if !ok {
		q, ok = tripleQuota(h, &xRateDashLimitKeys, now)
	}
	if !ok {
		return Reading{}, false
	}
	r := Reading{Dialect: "x-ratelimit", Quotas: append(quotas, q)}
	if d, ok := parseSecondsValue(get(h, "X-Ratelimit-Retry-After")); ok {
		if _, _, explicit := retryAfter(h, now); !explicit {
			r.RetryAfter, r.HasRetryAfter = d, true
		}
	}
	return r, true
}

// triple names the headers of a limit / remaining / reset triple (canonical keys), and the used
// count that stands in for a missing remaining.
type triple struct{ limit, remaining, reset, used string }

var (
	xRateLimitKeys     = triple{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Used"}
	xRateDashLimitKeys = triple{"X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset", "X-Rate-Limit-Used"}
	oldDraftKeys       = triple{"Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset", ""}
)

// tripleQuota reads a limit / remaining / reset triple of headers. ok is false when none of the
// three is present, even malformed.
func tripleQuota(h http.Header, k *triple, now time.Time) (Quota, bool) {
	lv, rv, tv := get(h, k.limit), get(h, k.remaining), get(h, k.reset)
	if lv == "" && rv == "" && tv == "" {
		return Quota{}, false
	}
	var q Quota
	if lv != "" {
		q.Limit, q.Window = limitWithWindow(lv)
	}
	if n, ok := parseCount(firstElement(rv)); ok {
		q.Remaining, q.HasRemaining = n, true
	} else if q.Limit > 0 && k.used != "" {
		if u, ok := parseCount(get(h, k.used)); ok {
			q.Remaining, q.HasRemaining = max(q.Limit-u, 0), true
		}
	}
	if tv != "" {
		read := firstElement(tv)
		q.Reset, q.ResetAt, q.HasReset = parseReset(read, h, now)
		if !q.HasReset {
			read = tv
			q.Reset, q.ResetAt, q.HasReset = parseReset(tv, h, now) // a date with a comma: an HTTP-date
		}
		if q.HasReset {
			q.ResetGrain = resetGrain(read, h)
		}
	}
	return q, true
}

// limitWithWindow reads a limit value: a plain count, or the older IETF List "10, 10;w=1, 50;w=60"
// whose first member is the limit and whose member of equal quota with a w parameter gives the
// window. The limit is 0 when the value is not a positive count.
func limitWithWindow(v string) (int64, time.Duration) {
	if strings.IndexByte(v, ',') < 0 && strings.IndexByte(v, ';') < 0 { // (ContainsAny costs 4 times more)
		// A single member without parameters, as nearly every API sends: the list parse would
		// read it as the count it is, at a tenth of the cost (limitFromList for the proof).
		if n, ok := parseCount(v); ok && n > 0 {
			return n, 0
		}
		return 0, 0
	}
	return limitFromList(v)
}

// limitFromList is limitWithWindow for any value, through the structured-field parse.
func limitFromList(v string) (int64, time.Duration) {
	if list, err := httpsfv.UnmarshalList([]string{v}); err == nil && len(list) > 0 {
		first, ok := list[0].(httpsfv.Item)
		if !ok {
			return 0, 0
		}
		limit, ok := first.Value.(int64)
		if !ok || limit <= 0 {
			return 0, 0
		}
		for _, m := range list {
			item, ok := m.(httpsfv.Item)
			if !ok || item.Params == nil {
				continue
			}
			if n, ok := item.Value.(int64); !ok || n != limit {
				continue
			}
			for _, key := range [...]string{"w", "window"} {
				if w, ok := item.Params.Get(key); ok {
					if d := sfWindow(w); d > 0 {
						return limit, d
					}
				}
			}
		}
		return limit, 0
	}
	n, ok := parseCount(firstElement(v))
	if !ok || n <= 0 {
		return 0, 0
	}
	return n, 0
}

// resetGrain is how much a reset value may overstate the true time to the reset: a whole number of
// seconds was rounded up by the server, by up to a second; a Unix time in whole seconds, or an
// HTTP-date (read rounded up by its second), measured against the Date header (itself truncated
// to the second) by up to two. Milliseconds, fractions and other dates: 0.
func resetGrain(v string, h http.Header) time.Duration {
	v = trimOWS(v)
	if _, ok := ratelimitheader.ParseHTTPDate(v); ok {
		if get(h, "Date") != "" {
			return 2 * ratelimitheader.DateGrain
		}
		return ratelimitheader.DateGrain
	}
	if v == "" || len(v) > 11 { // more than 11 digits: a Unix time in milliseconds
		return 0
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0
		}
	}
	if len(v) >= 10 && get(h, "Date") != "" { // a Unix time in seconds, against the Date header
		return 2 * time.Second
	}
	return time.Second
}
