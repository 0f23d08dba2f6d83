package ratelimitheader

import (
	"net/http"
	"strconv"
	"time"
)

// ParseRetryAfter parses one Retry-After value: delay-seconds, or an HTTP-date (ParseHTTPDate). A
// date is measured against date, the response's Date header value (which corrects for clock skew
// between server and client), or against now when date is empty or malformed, and rounded up by
// DateGrain: a server truncates the instant it means to the second it writes, so a date equal to
// the Date header may mean most of a second later, and a client retrying at once would be refused
// again. A date more than a second in the past yields 0.
//
// ok is false for an empty, malformed or negative value. Huge values are clamped to MaxDelay.
// Leniently, a decimal fraction ("1.5") is accepted as seconds too; it is rounded up to the next
// nanosecond, so a client that waits the returned delay is never early.
func ParseRetryAfter(value, date string, now time.Time) (d time.Duration, ok bool) {
	value = TrimOWS(value)
	if value == "" {
		return 0, false
	}
	if c := value[0]; c >= '0' && c <= '9' {
		sec, nsec, ok := parseSeconds(value)
		if !ok {
			return 0, false
		}
		return secondsDuration(sec, nsec), true
	}
	t, ok := ParseHTTPDate(value)
	if !ok {
		return 0, false
	}
	c := clock{date: date, now: now}
	d = t.Sub(c.at()) // saturates far from the present
	if d < MaxDelay {
		d += DateGrain
	}
	return clampDuration(d), true
}

// RetryAfter reads Retry-After (and Date) from h. It is equivalent to
// ParseRetryAfter(h.Get("Retry-After"), h.Get("Date"), now).
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := first(h, HeaderRetryAfter)
	if v == "" {
		return 0, false
	}
	return ParseRetryAfter(v, first(h, headerDate), now)
}

// FormatRetryAfter formats d as delay-seconds rounded up, at least 1 ("1" for d <= 1s), so that a
// client that waits exactly the advertised time is not early. Durations above MaxDelay are written as
// MaxDelay, the most any parser here accepts.
func FormatRetryAfter(d time.Duration) string {
	var buf [20]byte
	return string(appendRetryAfter(buf[:0], d))
}

// appendRetryAfter appends FormatRetryAfter(d) to b.
func appendRetryAfter(b []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(b, '1')
	}
	// Not clamped to MaxDelay (a guard against lying servers when parsing): a server must never
	// advertise less than the real wait, or a client that waits exactly that long is refused.
	return strconv.AppendInt(b, max(int64((d-1)/time.Second)+1, 1), 10)
}

// ceilSeconds returns d in whole seconds, rounded up, after clamping d to [0, MaxDelay].
func ceilSeconds(d time.Duration) int64 {
	d = clampDuration(d)
	return int64((d + time.Second - 1) / time.Second)
}

// first returns the first value of the canonical header key in h, or "". Unlike h.Get it does not
// canonicalize key, which callers guarantee is canonical already.
func first(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
