package dialects

import (
	"net/http"
	"strings"
	"time"
)

// shopify reads Shopify's REST Admin API.
//
// Source: Shopify dev docs, "REST Admin API rate limits"
// (https://shopify.dev/docs/api/admin-rest/usage/rate-limits) and "Shopify API limits"
// (https://shopify.dev/docs/api/usage/limits): the REST Admin API uses the leaky bucket algorithm,
// "Standard limit: 2 requests/second" with a bucket of 40 ("40 API requests within 60 seconds" is
// their example of the method), Advanced 4/s, Plus 20/s; every response carries
// X-Shopify-Shop-Api-Call-Limit: used/capacity ("X-Shopify-Shop-Api-Call-Limit: 32/40"), and a
// throttled request gets 429 with a decimal Retry-After ("Retry-After: 2.0").
//
// The header says the bucket's fill and capacity, not its leak rate. Shopify's published pairs
// (bucket 40 leaking 2/s standard, 80 at 4/s Advanced, 400 at 20/s Plus) all drain a full bucket in
// 20 seconds, so the dialect infers: Limit = capacity per Window = 20 s (capacity/20 per second),
// Remaining = capacity - used, Reset = the time the bucket takes to drain empty, used * 20 s /
// capacity, and Continuous (a leaky bucket). The 20 s is marked WindowAssumed: a bucket whose
// pair breaks that ratio is misread by it, and the header cannot tell, so a client measures the
// leak from the levels (throttle/learn does).
//
// Recognised by X-Shopify-Shop-Api-Call-Limit.
type shopify struct{}

// shopifyDrain is the time a full Shopify REST bucket takes to leak empty (capacity / leak rate:
// 40 / 2/s = 80 / 4/s = 400 / 20/s = 20 s).
const shopifyDrain = 20 * time.Second

// Name returns "shopify".
func (shopify) Name() string { return "shopify" }

// Read reads the call-limit header; ok is false without it.
func (shopify) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(shopify{}, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (shopify) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	v := get(h, "X-Shopify-Shop-Api-Call-Limit")
	if v == "" {
		return Reading{}, false
	}
	r := Reading{Dialect: "shopify", Quotas: quotas}
	usedS, capS, ok := strings.Cut(v, "/")
	used, okU := parseCount(usedS)
	capacity, okC := parseCount(capS)
	// A fill above the capacity ("40/1") contradicts itself: the pair is ignored, not read as a
	// bucket of one (which would pace one call per 20 s).
	if ok && okU && okC && capacity > 0 && used <= capacity {
		q := Quota{
			Name:         "rest",
			Limit:        capacity,
			Window:       shopifyDrain,
			Remaining:    capacity - used,
			HasRemaining: true,
			Continuous:   true,
			HasReset:     true,
			// The 20 s is the plans' ratio, not the server's word: a client measures the leak
			// from the levels (the learner's leakMeter).
			WindowAssumed: true,
		}
		// used/capacity of 20 s, rounded up to the nanosecond; both are at most int64 and the
		// product stays far below overflow for any real bucket, but guard it anyway.
		if used <= (1<<62)/int64(shopifyDrain) {
			q.Reset = clampWait(time.Duration((used*int64(shopifyDrain) + capacity - 1) / capacity))
		} else {
			q.Reset = shopifyDrain
		}
		r.Quotas = append(r.Quotas, q)
	}
	return r, true
}
