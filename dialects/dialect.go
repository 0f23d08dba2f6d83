package dialects

import (
	"net/http"
	"time"
)

// Dialect reads one response as one API family means it. Read returns ok=false when the response
// carries nothing of this dialect. Implementations must be safe for concurrent use and must not
// keep resp.
type Dialect interface {
	// Name is the dialect's name, such as "github"; it is the Reading's Dialect and what
	// [ForHost] selects.
	Name() string
	// Read reads resp, measuring relative values against now (and against the response's Date
	// header where the dialect's times are instants).
	Read(resp *http.Response, now time.Time) (Reading, bool)
}

// builtin is a built-in dialect. readTo is its Read with the quotas appended to quotas, an empty
// slice: the caller's storage (see [Reader.ReadInto]), so that a reader of every response allocates
// nothing for them. Its reading is not finished: the caller completes it once (readBuiltin, or
// Reader.ReadInto with its own throttle statuses), so the fields every API shares are looked up once.
type builtin interface {
	Dialect
	readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool)
}

// readBuiltin is a built-in's Read: its readTo, finished with a 429 as the throttle status.
func readBuiltin(d builtin, resp *http.Response, now time.Time) (Reading, bool) {
	r, ok := d.readTo(resp, now, nil)
	if !ok {
		return Reading{}, false
	}
	finish(resp, now, &r, throttle429)
	return r, true
}

// forcer is implemented by the built-in dialects that read more when [ForHost] tells them the
// host speaks their dialect: GitHub then reads 403 bodies even without a GitHub header. Like
// readTo, readForcedTo appends its quotas to quotas and does not finish its reading.
type forcer interface {
	readForcedTo(resp *http.Response, now time.Time, quotas []Quota) Reading
}

// builtins are the built-in dialects in recognition order: the vendors, whose header sets are
// their own, first; then the IETF fields; then X-Rate-Limit-* (X's spelling), then the generic
// X-RateLimit-*. The first dialect that recognises a response reads it alone.
var builtins = [...]builtin{
	gitHub{},
	anthropic{},
	openAI{},
	shopify{},
	discord{},
	salesforce{},
	azure{},
	stripe{},
	ietf{},
	twitter{},
	xRateLimit{},
}

// Builtins returns the built-in dialects in recognition order (a fresh slice): github, anthropic,
// openai, shopify, discord, salesforce, azure, stripe, ietf, twitter, x-ratelimit.
func Builtins() []Dialect {
	out := make([]Dialect, len(builtins))
	for i, d := range builtins {
		out[i] = d
	}
	return out
}

// Lookup returns the built-in dialect of that name.
func Lookup(name string) (Dialect, bool) {
	for _, d := range builtins {
		if d.Name() == name {
			return d, true
		}
	}
	return nil, false
}

// Names returns the names of the built-in dialects in recognition order.
func Names() []string {
	out := make([]string, len(builtins))
	for i, d := range builtins {
		out[i] = d.Name()
	}
	return out
}

var defaultReader = &Reader{throttle: []int{http.StatusTooManyRequests}}

// Read reads resp with the built-in dialects, recognising the dialect from the response itself
// (see the package documentation for the order), and completes the reading with what every API
// means the same way: Retry-After (and retry-after-ms, x-ms-retry-after-ms) when the dialect gave no
// wait, and Throttled for a 429. A nil resp reads as the zero Reading.
//
// Read is safe for concurrent use with distinct responses. It may replace resp.Body: a GitHub 403
// without retry-after has the first few KiB of its body read to tell a secondary rate limit from a
// permission error, and resp.Body is then a reader over what was read followed by the rest (closing
// it closes the original body), so the caller reads the body unchanged.
func Read(resp *http.Response, now time.Time) Reading { return defaultReader.Read(resp, now) }

// ReadInto is [Read] with the quotas stored in buf's array (from its start, as far as its capacity
// goes; beyond it, in a new one): see [Reader.ReadInto].
func ReadInto(buf []Quota, resp *http.Response, now time.Time) Reading {
	return defaultReader.ReadInto(buf, resp, now)
}

// finish completes a reading with the fields every API means the same way: the explicit wait when
// the dialect gave none, and Throttled for the statuses in throttle.
func finish(resp *http.Response, now time.Time, r *Reading, throttle []int) {
	if !r.HasRetryAfter {
		r.RetryAfter, r.RetryAfterGrain, r.HasRetryAfter = retryAfter(resp.Header, now)
	}
	markThrottled(resp, r, throttle)
}

// markThrottled sets Throttled for the statuses in throttle.
func markThrottled(resp *http.Response, r *Reading, throttle []int) {
	if !r.Throttled {
		for _, s := range throttle {
			if resp.StatusCode == s {
				r.Throttled = true
				break
			}
		}
	}
}

// throttle429 is the default throttle status list of the built-in dialects' own finish.
var throttle429 = []int{http.StatusTooManyRequests}
