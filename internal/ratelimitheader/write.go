package ratelimitheader

import (
	"net/http"
	"strconv"
	"time"
)

// Fields is what a server advertises on a response. The zero value advertises an unnamed policy
// ("default") with nothing remaining and an immediate reset; set at least Limit and Window.
type Fields struct {
	Policy     string        // policy name; "" means "default"
	Limit      int64         // quota per Window; <= 0 writes no RateLimit-Policy and no X-RateLimit-Limit
	Window     time.Duration // quota window; <= 0 writes the policy without w
	Remaining  int64         // requests left in the current window; negative is written as 0
	Reset      time.Duration // until the quota is restored / window ends; clamped to [0, MaxDelay]
	RetryAfter time.Duration // > 0 only on a throttled response: also writes Retry-After
}

// maxSFInteger is the largest Integer a structured field can carry (RFC 9651 section 3.3.1). Counts
// above it are written as it.
const maxSFInteger = 999_999_999_999_999

// Write sets, replacing any earlier values:
//
//	RateLimit-Policy: "<policy>";q=<limit>;w=<window seconds>   (when Limit > 0)
//	RateLimit: "<policy>";r=<remaining>;t=<reset seconds>
//	X-RateLimit-Limit: <limit>                                   (when Limit > 0)
//	X-RateLimit-Remaining: <remaining>
//	X-RateLimit-Reset: <reset seconds>
//	Retry-After: <seconds>                                        (when RetryAfter > 0)
//
// Durations are written as delta-seconds rounded up (a client that waits that long is not early;
// Retry-After is at least 1, see [FormatRetryAfter]); the resets are clamped to MaxDelay, Retry-After
// is not.
//
// A Window that is not a whole number of seconds is advertised in RateLimit-Policy scaled to whole
// seconds so that q/w keeps the rate: w is the smallest whole number of seconds for which the quota
// over w is an integer, q = Limit*w/Window (10 per 100ms is q=100;w=1; 2 per 1.5s is q=4;w=3). When
// that w would exceed 24h, or q the largest structured-field Integer, w = ceil(Window) and
// q = floor(Limit*w/Window) instead, which never advertises more than the real rate.
// X-RateLimit-Limit always carries the unscaled Limit, the quota that X-RateLimit-Remaining counts
// down. Counts above 999,999,999,999,999 (the largest structured-field Integer) are written as that.
// Bytes of Policy outside printable ASCII, which a structured-field String cannot carry, are written
// as '_'.
//
// Write is safe for concurrent use with distinct headers.
//
// The values are serialised by hand, not by a general structured-field serializer: the only
// structured values written are one String and Integers, and writing them directly costs two
// allocations per call (one string holding every value, one slice holding every header's value list).
func Write(h http.Header, f Fields) {
	name := policyName(f.Policy)
	remaining := min(max(f.Remaining, 0), maxSFInteger)
	reset := ceilSeconds(f.Reset)

	// Every value is appended to one buffer; ends[i] is where value i ends, keys[i] its header.
	var (
		buf  [256]byte
		b    = buf[:0]
		ends [6]int
		keys [6]string
		n    = 0
	)
	next := func(key string) {
		keys[n], ends[n] = key, len(b)
		n++
	}
	if f.Limit > 0 {
		limit := min(f.Limit, maxSFInteger)
		b = appendSFString(b, name)
		if f.Window > 0 {
			q, w := scaleWindow(limit, f.Window)
			b = append(b, ";q="...)
			b = strconv.AppendInt(b, q, 10)
			b = append(b, ";w="...)
			b = strconv.AppendInt(b, w, 10)
		} else {
			b = append(b, ";q="...)
			b = strconv.AppendInt(b, limit, 10)
		}
		next(HeaderRateLimitPolicy)
		b = strconv.AppendInt(b, limit, 10)
		next(HeaderXLimit)
	}
	b = appendSFString(b, name)
	b = append(b, ";r="...)
	b = strconv.AppendInt(b, remaining, 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, reset, 10)
	next(HeaderRateLimit)
	b = strconv.AppendInt(b, remaining, 10)
	next(HeaderXRemaining)
	b = strconv.AppendInt(b, reset, 10)
	next(HeaderXReset)
	if f.RetryAfter > 0 {
		b = appendRetryAfter(b, f.RetryAfter)
		next(HeaderRetryAfter)
	}

	all := string(b)
	values := make([]string, n)
	start := 0
	for i := range n {
		values[i] = all[start:ends[i]]
		start = ends[i]
		// A one-element list of its own capacity: appending to one header never touches another.
		h[keys[i]] = values[i : i+1 : i+1]
	}
}

// appendSFString appends s as a structured-field String (RFC 9651 section 4.1.6): quoted, with '"'
// and '\' escaped. s must hold printable ASCII only (see policyName).
func appendSFString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// policyName returns the policy name to write: "default" for "", and bytes outside the printable
// ASCII range of a structured-field String replaced by '_'.
func policyName(p string) string {
	if p == "" {
		return "default"
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] > 0x7e {
			b := []byte(p)
			for j := i; j < len(b); j++ {
				if b[j] < 0x20 || b[j] > 0x7e {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	return p
}
