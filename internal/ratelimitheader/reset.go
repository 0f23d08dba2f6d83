package ratelimitheader

import "time"

// ParseReset parses one numeric reset value as the legacy fields carry it: the first comma-separated
// element of value, without parameters, read as a non-negative decimal number of seconds ("17",
// "1.5"). Above 1e9 it is a Unix time in seconds, above 1e12 one in milliseconds, measured against
// date (the response's Date header value, which corrects for clock skew) or against now when date
// is empty or malformed; otherwise it is delta-seconds. A time in the past yields 0; the result is
// clamped to [0, MaxDelay] and rounded up to the next nanosecond. ok is false for an empty,
// negative or non-numeric value (dates such as RFC 3339 are not numbers: see package dialects).
//
// ParseReset is what [Parse] applies to X-RateLimit-Reset; it is safe for concurrent use.
func ParseReset(value, date string, now time.Time) (time.Duration, bool) {
	d, _, ok := ParseResetAt(value, date, now)
	return d, ok
}

// ParseResetAt is [ParseReset] that also returns the instant the value names when it is a Unix
// time (in seconds or milliseconds), on the server's clock and as written: two answers that name
// the same instant name the same reset, exactly, where the times until it, measured against a Date
// header truncated to the second, differ by up to a second. at is the zero Time for
// delta-seconds. It is safe for concurrent use.
func ParseResetAt(value, date string, now time.Time) (d time.Duration, at time.Time, ok bool) {
	elem, _ := firstElement(value)
	sec, nsec, ok := parseSeconds(elem)
	if !ok {
		return 0, time.Time{}, false
	}
	c := clock{date: date, now: now}
	d, at = c.reset(sec, nsec)
	return d, at, true
}
