package ratelimitheader

import (
	"net/http"
	"strings"
	"time"
)

// DateGrain is the resolution of an HTTP-date: whole seconds. A server writes the instant it means
// truncated to its second (Go's time.Format does), so the instant lies up to a second after the
// date it wrote; a wait to a date is rounded up by DateGrain (see ParseRetryAfter).
const DateGrain = time.Second

// ParseHTTPDate parses an HTTP-date in the three forms RFC 9110 allows (http.ParseTime), and,
// leniently, the RFC 1123 form with the zone written "UTC" or as a numeric offset instead of
// "GMT" (sethvargo/go-limiter writes time.RFC1123 of a UTC time: "Mon, 02 Jan 2006 15:04:05 UTC").
// Other zone names are refused: their offsets are ambiguous.
func ParseHTTPDate(s string) (time.Time, bool) {
	if s == "" || (s[0]|0x20 < 'a' || s[0]|0x20 > 'z') {
		// Every form begins with the day's name: a number is no date, and is refused without
		// the three failed parses (and their errors' allocations) it would cost.
		return time.Time{}, false
	}
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	if strings.HasSuffix(s, " UTC") {
		if t, err := time.Parse(time.RFC1123, s); err == nil {
			return t.UTC(), true
		}
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC1123Z, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}
