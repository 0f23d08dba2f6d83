package ratelimitheader

import (
	"net/http"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"
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
func Write(h http.Header, f Fields) {
	name := policyName(f.Policy)
	remaining := min(max(f.Remaining, 0), maxSFInteger)
	reset := ceilSeconds(f.Reset)

	if f.Limit > 0 {
		limit := min(f.Limit, maxSFInteger)
		params := httpsfv.NewParams()
		if f.Window > 0 {
			q, w := scaleWindow(limit, f.Window)
			params.Add("q", q)
			params.Add("w", w)
		} else {
			params.Add("q", limit)
		}
		setStructured(h, HeaderRateLimitPolicy, name, params)
		h[HeaderXLimit] = []string{strconv.FormatInt(limit, 10)}
	}

	params := httpsfv.NewParams()
	params.Add("r", remaining)
	params.Add("t", reset)
	setStructured(h, HeaderRateLimit, name, params)
	h[HeaderXRemaining] = []string{strconv.FormatInt(remaining, 10)}
	h[HeaderXReset] = []string{strconv.FormatInt(reset, 10)}

	if f.RetryAfter > 0 {
		h[HeaderRetryAfter] = []string{FormatRetryAfter(f.RetryAfter)}
	}
}

// setStructured sets key to a one-member List: the String name with params. Inputs are sanitized by
// the caller (printable name, integers within the structured-field range), so marshalling cannot fail;
// if it did, the field would be left out rather than written wrong.
func setStructured(h http.Header, key, name string, params *httpsfv.Params) {
	v, err := httpsfv.Marshal(httpsfv.List{httpsfv.Item{Value: name, Params: params}})
	if err != nil {
		delete(h, key)
		return
	}
	h[key] = []string{v}
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
