package dialects

import (
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// readEveryBuiltin is Read without the family filter: every built-in is asked in order. The
// filter must never change a reading.
func readEveryBuiltin(resp *http.Response) Reading {
	if resp.StatusCode < 400 && !carriesLimits(resp.Header) {
		return Reading{}
	}
	for _, b := range builtins {
		if rd, ok := b.Read(resp, fuzzNow); ok {
			if rd.Dialect == "" {
				rd.Dialect = b.Name()
			}
			finish(resp, fuzzNow, &rd, defaultReader.throttle)
			return rd
		}
	}
	rd := Reading{}
	finish(resp, fuzzNow, &rd, defaultReader.throttle)
	return rd
}

// sameWithAndWithoutFilter fails t when Read and readEveryBuiltin read one response differently.
func sameWithAndWithoutFilter(t *testing.T, status int, h http.Header, body string) {
	t.Helper()
	mk := func() *http.Response {
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
	}
	if got, want := Read(mk(), fuzzNow), readEveryBuiltin(mk()); !reflect.DeepEqual(got, want) {
		t.Fatalf("status %d, headers %v: filtered %+v, every dialect asked %+v", status, h, got, want)
	}
}

// fieldsTheDialectsRead is every field name a built-in reads or recognises a response by, with a
// value of the kind it expects there.
var fieldsTheDialectsRead = map[string]string{
	"X-Ratelimit-Limit": "60", "X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1700000060",
	"X-Ratelimit-Used": "60", "X-Ratelimit-Resource": "core", "X-Ratelimit-Retry-After": "3",
	"X-Github-Request-Id": "A:B", "X-Github-Media-Type": "github.v3",
	"X-Ratelimit-Limit-Requests": "500", "X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "1m30.5s",
	"X-Ratelimit-Limit-Tokens": "1000", "X-Ratelimit-Remaining-Tokens": "5", "X-Ratelimit-Reset-Tokens": "20ms",
	"X-Ratelimit-Limit-Tokens_usage_based": "1000", "X-Ratelimit-Remaining-Tokens_usage_based": "5",
	"X-Ratelimit-Reset-Tokens_usage_based": "6m0s",
	"Anthropic-Ratelimit-Requests-Limit":   "50", "Anthropic-Ratelimit-Requests-Remaining": "0",
	"Anthropic-Ratelimit-Requests-Reset": "2023-11-14T22:14:00Z", "Anthropic-Ratelimit-Tokens-Remaining": "7",
	"X-Shopify-Shop-Api-Call-Limit": "40/40",
	"X-Ratelimit-Bucket":            "abcd", "X-Ratelimit-Reset-After": "1.5", "X-Ratelimit-Global": "true", "X-Ratelimit-Scope": "global",
	"Sforce-Limit-Info":                           "api-usage=5000/5000",
	"X-Ms-Ratelimit-Remaining-Subscription-Reads": "3", "X-Ms-Retry-After-Ms": "1500", "Retry-After-Ms": "250",
	"Stripe-Should-Retry": "false", "Request-Id": "req_123",
	"Ratelimit": `"d";r=0;t=30`, "Ratelimit-Policy": `"d";q=100;w=60`, "Beta-Ratelimit": "limit=100, remaining=0, reset=17",
	"Beta-Ratelimit-Policy": `"d";q=100;w=60`, "Ratelimit-Limit": "10, 10;w=1", "Ratelimit-Remaining": "0", "Ratelimit-Reset": "1",
	"X-Rate-Limit-Limit": "15", "X-Rate-Limit-Remaining": "0", "X-Rate-Limit-Reset": "1700000900", "X-Rate-Limit-Used": "15",
	"X-Ratelimit-Foo": "1", "X-Ratelimit-Reset-Foo": "2",
	"Retry-After": "7", "Date": "Tue, 14 Nov 2023 22:13:20 GMT", "Content-Type": "application/json",
}

// TestFamiliesSkipNoDialect: the family filter reads every response as asking every built-in
// would, for each field any built-in reads, alone and beside each other one, on a success, a
// 403 and a 429.
func TestFamiliesSkipNoDialect(t *testing.T) {
	for a, av := range fieldsTheDialectsRead {
		for b, bv := range fieldsTheDialectsRead {
			h := http.Header{a: {av}}
			if b > a {
				h[b] = []string{bv}
			} else if b != a {
				continue
			}
			for _, status := range []int{200, 403, 429, 503} {
				sameWithAndWithoutFilter(t, status, h, `{"message":"You have exceeded a secondary rate limit"}`)
			}
		}
	}
}

// TestRecognisedFieldsAreOfTheFamily: every field a built-in recognises a response by alone is of
// one of its families, so the filter never skips it (a review found OpenAI's tokens_usage_based
// triple read as the generic family, and the quota lost).
func TestRecognisedFieldsAreOfTheFamily(t *testing.T) {
	for i, d := range builtins {
		for k, v := range fieldsTheDialectsRead {
			for _, status := range []int{200, 403, 429} {
				if _, ok := d.Read(&http.Response{StatusCode: status, Header: http.Header{k: {v}}, Body: http.NoBody}, fuzzNow); ok &&
					familyOf(k)&builtinFamilies[i] == 0 {
					t.Errorf("%s recognises %s (status %d), of family %b, outside its families %b", d.Name(), k, status, familyOf(k), builtinFamilies[i])
				}
			}
		}
	}
}

// TestBuiltinFamiliesInOrder: builtinFamilies follows builtins: each dialect recognises the
// fields of its families.
func TestBuiltinFamiliesInOrder(t *testing.T) {
	for i, d := range builtins {
		recognised := false
		for k, v := range fieldsTheDialectsRead {
			if familyOf(k)&builtinFamilies[i] == 0 {
				continue
			}
			if _, ok := d.Read(&http.Response{StatusCode: 429, Header: http.Header{k: {v}}, Body: http.NoBody}, fuzzNow); ok {
				recognised = true
			}
		}
		if !recognised {
			t.Errorf("%s recognises none of the fields of its families %b", d.Name(), builtinFamilies[i])
		}
	}
}

// TestFamilyNamesPassLimitField: scanFields looks for the family of a name only when limitField
// accepts it, so every name of a family must pass it.
func TestFamilyNamesPassLimitField(t *testing.T) {
	for k := range fieldsTheDialectsRead {
		if familyOf(k) != 0 && !limitField(k) {
			t.Errorf("%s is of family %b but limitField refuses it", k, familyOf(k))
		}
	}
}

// TestReadingAQuotaAllocatesOnce: reading a response with the X-RateLimit-* triple allocates its
// Quotas and nothing else (a date parse tried on every numeric reset allocated six errors a read).
func TestReadingAQuotaAllocatesOnce(t *testing.T) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{
		"X-Ratelimit-Limit": {"60000"}, "X-Ratelimit-Remaining": {"59000"}, "X-Ratelimit-Reset": {"60"},
		"Content-Type": {"application/json"}, "Date": {"Tue, 14 Nov 2023 22:13:20 GMT"},
	}, Body: http.NoBody}
	if n := testing.AllocsPerRun(100, func() { Read(resp, fuzzNow) }); n > 1 {
		t.Errorf("%v allocations a read, want 1 (the Quotas)", n)
	}
}
