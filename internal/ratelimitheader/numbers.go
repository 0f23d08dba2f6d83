package ratelimitheader

import (
	"math"
	"time"
)

// saturatedSeconds is where parseSeconds stops counting: far above both MaxDelay and any plausible Unix
// time, also in milliseconds, and small enough that counting on in int64 never overflows; larger
// values are only ever compared or clamped.
const saturatedSeconds = 1 << 50

// TrimOWS removes leading and trailing optional whitespace (SP and HTAB, RFC 9110 section 5.6.3).
// It scans by hand: strings.Trim builds its character set on every call.
func TrimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// firstElement returns the first comma-separated element of a header value, without parameters
// (";..."), trimmed. "100, 100;w=60" and "100;w=60" both yield "100".
func firstElement(s string) (elem, params string) {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			s = s[:i]
			break
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ';' {
			return TrimOWS(s[:i]), s[i+1:]
		}
	}
	return TrimOWS(s), ""
}

// parseSeconds parses a non-negative decimal number of seconds: 1*DIGIT [ "." 1*DIGIT ], surrounded
// by optional whitespace. No sign, exponent, NaN or Inf is accepted. The whole part saturates at
// saturatedSeconds; fractional digits beyond nanoseconds round the result up, so a client that waits
// the parsed time never waits too little.
func parseSeconds(s string) (sec int64, nsec int64, ok bool) {
	s = TrimOWS(s)
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if sec < saturatedSeconds {
			sec = sec*10 + int64(s[i]-'0')
		}
	}
	if i == 0 {
		return 0, 0, false
	}
	if sec > saturatedSeconds {
		sec = saturatedSeconds
	}
	if i == len(s) {
		return sec, 0, true
	}
	if s[i] != '.' || i+1 == len(s) {
		return 0, 0, false
	}
	i++
	scale := int64(100_000_000)
	roundUp := false
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		if scale > 0 {
			nsec += int64(c-'0') * scale
			scale /= 10
		} else if c != '0' {
			roundUp = true
		}
	}
	if roundUp {
		nsec++
		if nsec == int64(time.Second) {
			sec, nsec = sec+1, 0
		}
	}
	return sec, nsec, true
}

// clampDuration limits d to [0, MaxDelay].
func clampDuration(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	if d > MaxDelay {
		return MaxDelay
	}
	return d
}

// secondsDuration converts a parsed (sec, nsec) pair to a duration clamped to [0, MaxDelay].
func secondsDuration(sec, nsec int64) time.Duration {
	if sec >= int64(MaxDelay/time.Second) {
		return MaxDelay
	}
	return clampDuration(time.Duration(sec)*time.Second + time.Duration(nsec))
}

// maxWindow is the longest quota window Parse accepts (366 days, so yearly quotas fit). A longer
// window is ignored rather than clamped: shortening a window without its quota would overstate the rate.
const maxWindow = 366 * 24 * time.Hour

// windowDuration converts a parsed (sec, nsec) window to a duration; ok is false for a zero window or
// one longer than maxWindow.
func windowDuration(sec, nsec int64) (time.Duration, bool) {
	if sec > int64(maxWindow/time.Second) {
		return 0, false
	}
	d := time.Duration(sec)*time.Second + time.Duration(nsec)
	if d <= 0 || d > maxWindow {
		return 0, false
	}
	return d, true
}

// floatSeconds converts a structured-field decimal number of seconds to a duration clamped to
// [0, MaxDelay], rounding up to the next nanosecond. ok is false for negative or non-finite values.
func floatSeconds(f float64) (time.Duration, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	if f >= MaxDelay.Seconds() {
		return MaxDelay, true
	}
	return clampDuration(time.Duration(math.Ceil(f * 1e9))), true
}

// parseCount parses a non-negative integer count (1*DIGIT, optional whitespace). ok is false for
// anything else, including values that overflow int64.
func parseCount(s string) (int64, bool) {
	s = TrimOWS(s)
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// legacyWindow finds the window of limit in a legacy limit value. Older drafts wrote the current quota
// first and then the quota policies with their windows: "10, 10;w=1, 50;w=60" (w or window, seconds).
// The window is that of the first element whose quota equals limit, the first element included
// ("100;w=60").
func legacyWindow(value string, limit int64) (time.Duration, bool) {
	for value != "" {
		var elem string
		elem, value = value, ""
		for i := 0; i < len(elem); i++ {
			if elem[i] == ',' {
				elem, value = elem[:i], elem[i+1:]
				break
			}
		}
		num, params := firstElement(elem)
		if n, ok := parseCount(num); ok && n == limit && params != "" {
			if w, ok := windowParam(params); ok {
				return w, true
			}
		}
	}
	return 0, false
}

// windowParam finds a window parameter ("w=60" or "window=60", seconds) among ";"-separated
// parameters.
func windowParam(params string) (time.Duration, bool) {
	for params != "" {
		var p string
		p, params = params, ""
		for i := 0; i < len(p); i++ {
			if p[i] == ';' {
				p, params = p[:i], p[i+1:]
				break
			}
		}
		p = TrimOWS(p)
		var val string
		switch {
		case len(p) > 2 && p[:2] == "w=":
			val = p[2:]
		case len(p) > 7 && p[:7] == "window=":
			val = p[7:]
		default:
			continue
		}
		if sec, nsec, ok := parseSeconds(val); ok {
			if d, ok := windowDuration(sec, nsec); ok {
				return d, true
			}
		}
	}
	return 0, false
}

// clock is the reference point of one response: its Date header when present and valid, else now.
// The Date header is parsed at most once, and only when a value needs it.
type clock struct {
	date   string
	now    time.Time
	parsed bool
	base   time.Time
}

// at returns the reference time.
func (c *clock) at() time.Time {
	if !c.parsed {
		c.parsed = true
		c.base = c.now
		if c.date != "" {
			if t, ok := ParseHTTPDate(TrimOWS(c.date)); ok {
				c.base = t
			}
		}
	}
	return c.base
}

// reset interprets a parsed reset value: above epochMillisThreshold it is a Unix time in
// milliseconds, above epochThreshold one in seconds, both measured against the clock, otherwise
// delta-seconds. The result is clamped to [0, MaxDelay]; at is the Unix time named, zero for
// delta-seconds.
func (c *clock) reset(sec, nsec int64) (d time.Duration, at time.Time) {
	if sec > epochMillisThreshold {
		at = time.UnixMilli(sec).Add(time.Duration(nsec / 1000)) // nsec of a millisecond
		return clampDuration(at.Sub(c.at())), at
	}
	if sec > epochThreshold || (sec == epochThreshold && nsec > 0) {
		at = time.Unix(sec, nsec)
		return clampDuration(at.Sub(c.at())), at
	}
	return secondsDuration(sec, nsec), time.Time{}
}
