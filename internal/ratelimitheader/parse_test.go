package ratelimitheader

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// refDate is refNow as a Date header value.
const refDate = "Sun, 06 Nov 1994 08:49:37 GMT"

// hdr builds a header from key/value pairs; keys are canonicalized as net/http does.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestParseDraft(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want Info
	}{
		{"policy and limit", hdr("RateLimit-Policy", `"default";q=100;w=60`, "RateLimit", `"default";r=42;t=17`),
			Info{Policy: "default", Limit: 100, Window: time.Minute, Remaining: 42, HasRemaining: true, Reset: 17 * time.Second, HasReset: true}},
		{"token names", hdr("RateLimit-Policy", `burst;q=10;w=1`, "RateLimit", `burst;r=0;t=1`),
			Info{Policy: "burst", Limit: 10, Window: time.Second, Remaining: 0, HasRemaining: true, Reset: time.Second, HasReset: true}},
		{"string policy matches token limit", hdr("RateLimit-Policy", `"burst";q=10;w=1`, "RateLimit", `burst;r=3;t=1`),
			Info{Policy: "burst", Limit: 10, Window: time.Second, Remaining: 3, HasRemaining: true, Reset: time.Second, HasReset: true}},
		{"limit item matching the second policy", hdr("RateLimit-Policy", `"burst";q=10;w=1, "daily";q=1000;w=86400`, "RateLimit", `"daily";r=7;t=3600`),
			Info{Policy: "daily", Limit: 1000, Window: 24 * time.Hour, Remaining: 7, HasRemaining: true, Reset: time.Hour, HasReset: true}},
		{"first matching limit item wins", hdr("RateLimit-Policy", `"daily";q=1000;w=86400`, "RateLimit", `"other";r=1;t=1, "daily";r=7;t=3600, "daily";r=9;t=9`),
			Info{Policy: "daily", Limit: 1000, Window: 24 * time.Hour, Remaining: 7, HasRemaining: true, Reset: time.Hour, HasReset: true}},
		{"policies over two field lines", hdr("RateLimit-Policy", `"burst";q=10;w=1`, "RateLimit-Policy", `"daily";q=1000;w=86400`, "RateLimit", `"daily";r=7;t=3600`),
			Info{Policy: "daily", Limit: 1000, Window: 24 * time.Hour, Remaining: 7, HasRemaining: true, Reset: time.Hour, HasReset: true}},
		{"no match takes the first of each", hdr("RateLimit-Policy", `"a";q=10;w=1, "b";q=20;w=2`, "RateLimit", `"c";r=5;t=2, "d";r=6;t=3`),
			Info{Policy: "c", Limit: 10, Window: time.Second, Remaining: 5, HasRemaining: true, Reset: 2 * time.Second, HasReset: true}},
		{"limit without policy", hdr("RateLimit", `"default";r=42;t=17`),
			Info{Policy: "default", Remaining: 42, HasRemaining: true, Reset: 17 * time.Second, HasReset: true}},
		{"policy without limit", hdr("RateLimit-Policy", `"default";q=100;w=60`),
			Info{Policy: "default", Limit: 100, Window: time.Minute}},
		{"policy with quota unit and partition key", hdr("RateLimit-Policy", `"default";q=100;qu="requests";w=60;pk=:AQID:`),
			Info{Policy: "default", Limit: 100, Window: time.Minute}},
		{"policy without window", hdr("RateLimit-Policy", `"default";q=100`),
			Info{Policy: "default", Limit: 100}},
		{"decimal window and reset", hdr("RateLimit-Policy", `"p";q=1;w=0.5`, "RateLimit", `"p";r=1;t=0.25`),
			Info{Policy: "p", Limit: 1, Window: 500 * time.Millisecond, Remaining: 1, HasRemaining: true, Reset: 250 * time.Millisecond, HasReset: true}},
		{"integer policy of earlier drafts", hdr("RateLimit-Policy", `100;w=60`),
			Info{Limit: 100, Window: time.Minute}},
		{"dictionary form of earlier drafts", hdr("RateLimit", `limit=100, remaining=42, reset=17`),
			Info{Limit: 100, Remaining: 42, HasRemaining: true, Reset: 17 * time.Second, HasReset: true}},
		{"epoch t against Date", hdr("RateLimit", `"default";r=1;t=1234567890`, "Date", "Fri, 13 Feb 2009 23:31:00 GMT"),
			Info{Policy: "default", Remaining: 1, HasRemaining: true, Reset: 30 * time.Second, HasReset: true}},
		{"t above MaxDelay clamped", hdr("RateLimit", `"default";r=1;t=999999`),
			Info{Policy: "default", Remaining: 1, HasRemaining: true, Reset: MaxDelay, HasReset: true}},
		{"window above a year ignored", hdr("RateLimit-Policy", `"default";q=100;w=99999999`),
			Info{Policy: "default", Limit: 100}},
		{"zero window ignored", hdr("RateLimit-Policy", `"default";q=100;w=0`),
			Info{Policy: "default", Limit: 100}},
		{"negative values ignored", hdr("RateLimit-Policy", `"default";q=-1;w=-60`, "RateLimit", `"default";r=-1;t=-5`),
			Info{Policy: "default"}},
		{"zero quota ignored", hdr("RateLimit-Policy", `"default";q=0;w=60`),
			Info{Policy: "default", Window: time.Minute}},
		{"wrong parameter types ignored", hdr("RateLimit-Policy", `"default";q="100";w=?1`, "RateLimit", `"default";r=1.5;t="17"`),
			Info{Policy: "default"}},
		{"inner list members skipped", hdr("RateLimit-Policy", `("a" "b");q=1, "default";q=5;w=1`, "RateLimit", `"default";r=4;t=1`),
			Info{Policy: "default", Limit: 5, Window: time.Second, Remaining: 4, HasRemaining: true, Reset: time.Second, HasReset: true}},
		{"malformed structured fields ignored", hdr("RateLimit-Policy", `"default;q=100`, "RateLimit", `r=1;;t=2`),
			Info{}},
		{"integer out of structured range ignored", hdr("RateLimit", `"default";r=9999999999999999;t=1`),
			Info{}},
		{"empty fields", hdr("RateLimit-Policy", ``, "RateLimit", ``),
			Info{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Parse(tt.h, refNow))
		})
	}
}

func TestParseLegacy(t *testing.T) {
	// The three legacy dialects behave alike; every case runs against each of them.
	dialects := []struct{ name, limit, remaining, reset string }{
		{"X-RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"},
		{"X-Rate-Limit", "X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset"},
		{"RateLimit older drafts", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"},
	}
	const epochDate = "Fri, 13 Feb 2009 23:31:00 GMT" // Unix 1234567860
	tests := []struct {
		name                    string
		limit, remaining, reset string
		date                    string
		now                     time.Time
		want                    Info
	}{
		{"plain integers", "100", "42", "17", "", refNow,
			Info{Limit: 100, Remaining: 42, HasRemaining: true, Reset: 17 * time.Second, HasReset: true}},
		{"zero remaining and reset", "100", "0", "0", "", refNow,
			Info{Limit: 100, Remaining: 0, HasRemaining: true, Reset: 0, HasReset: true}},
		{"whitespace", " 100 ", "\t42", "17 ", "", refNow,
			Info{Limit: 100, Remaining: 42, HasRemaining: true, Reset: 17 * time.Second, HasReset: true}},
		{"fractional reset", "", "", "1.5", "", refNow,
			Info{Reset: 1500 * time.Millisecond, HasReset: true}},
		{"epoch reset against Date", "", "", "1234567890", epochDate, refNow,
			Info{Reset: 30 * time.Second, HasReset: true}},
		{"fractional epoch reset against Date", "", "", "1234567890.5", epochDate, refNow,
			Info{Reset: 30500 * time.Millisecond, HasReset: true}},
		{"epoch reset in milliseconds against Date", "", "", "1234567890250", epochDate, refNow,
			Info{Reset: 30250 * time.Millisecond, HasReset: true}},
		{"fractional epoch reset in milliseconds", "", "", "1234567890250.5", epochDate, refNow,
			Info{Reset: 30250*time.Millisecond + 500*time.Microsecond, HasReset: true}},
		{"epoch reset against now without Date", "", "", "1234567890", "", time.Unix(1234567880, 0),
			Info{Reset: 10 * time.Second, HasReset: true}},
		{"epoch reset against now with malformed Date", "", "", "1234567890", "not a date", time.Unix(1234567880, 0),
			Info{Reset: 10 * time.Second, HasReset: true}},
		{"epoch reset in the past is 0", "", "", "1234567890", "", time.Unix(1234567990, 0),
			Info{Reset: 0, HasReset: true}},
		{"far future epoch clamped", "", "", "99999999999", "", time.Unix(1234567880, 0),
			Info{Reset: MaxDelay, HasReset: true}},
		{"exactly 1e9 is delta-seconds, clamped", "", "", "1000000000", "", refNow,
			Info{Reset: MaxDelay, HasReset: true}},
		{"huge delta clamped", "", "", "86401", "", refNow,
			Info{Reset: MaxDelay, HasReset: true}},
		{"overflowing reset clamped", "", "", "999999999999999999999999999999", "", refNow,
			Info{Reset: MaxDelay, HasReset: true}},
		{"limit with window parameter", "100, 100;w=60", "", "", "", refNow,
			Info{Limit: 100, Window: time.Minute}},
		{"limit with window= parameter", "10, 10;window=1, 50;window=60", "", "", "", refNow,
			Info{Limit: 10, Window: time.Second}},
		{"limit with window of another quota", "10, 50;w=60", "", "", "", refNow,
			Info{Limit: 10}},
		{"limit with garbage parameter", "100;w=soon;foo", "", "", "", refNow,
			Info{Limit: 100}},
		{"list values take the first", "100, 200", "5, 6", "7, 8", "", refNow,
			Info{Limit: 100, Remaining: 5, HasRemaining: true, Reset: 7 * time.Second, HasReset: true}},
		{"negative values ignored", "-100", "-1", "-5", "", refNow, Info{}},
		{"zero limit ignored", "0", "", "", "", refNow, Info{}},
		{"fractional counts ignored", "100.5", "1.5", "", "", refNow, Info{}},
		{"garbage ignored", "lots", "some", "later", "", refNow, Info{}},
		{"NaN and Inf ignored", "NaN", "Inf", "NaN", "", refNow, Info{}},
		{"exponents ignored", "1e3", "1e3", "1e3", "", refNow, Info{}},
		{"overflowing counts ignored", "99999999999999999999", "99999999999999999999", "", "", refNow, Info{}},
		{"empty values ignored", "", "", "", "", refNow, Info{}},
	}
	for _, d := range dialects {
		for _, tt := range tests {
			t.Run(d.name+"/"+tt.name, func(t *testing.T) {
				h := http.Header{}
				for _, kv := range [][2]string{{d.limit, tt.limit}, {d.remaining, tt.remaining}, {d.reset, tt.reset}, {"Date", tt.date}} {
					if kv[1] != "" {
						h.Set(kv[0], kv[1])
					}
				}
				assert.Equal(t, tt.want, Parse(h, tt.now))
			})
		}
	}
}

func TestParsePrecedence(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want Info
	}{
		{"none", http.Header{}, Info{}},
		{"nil header", nil, Info{}},
		{"unrelated headers", hdr("Content-Type", "text/plain", "Date", refDate), Info{}},
		{"draft over X-RateLimit", hdr(
			"RateLimit-Policy", `"default";q=100;w=60`, "RateLimit", `"default";r=42;t=17`,
			"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "3"),
			Info{Policy: "default", Limit: 100, Window: time.Minute, Remaining: 42, HasRemaining: true, Reset: 17 * time.Second, HasReset: true}},
		{"X-RateLimit over X-Rate-Limit over RateLimit-*", hdr(
			"X-RateLimit-Limit", "1", "X-Rate-Limit-Limit", "2", "RateLimit-Limit", "3",
			"X-Rate-Limit-Remaining", "20", "RateLimit-Remaining", "30",
			"RateLimit-Reset", "300"),
			Info{Limit: 1, Remaining: 20, HasRemaining: true, Reset: 300 * time.Second, HasReset: true}},
		{"field by field: invalid draft values fall through", hdr(
			"RateLimit", `"default";r=-1;t=17`, "X-RateLimit-Remaining", "4", "X-RateLimit-Limit", "10"),
			Info{Policy: "default", Limit: 10, Remaining: 4, HasRemaining: true, Reset: 17 * time.Second, HasReset: true}},
		{"malformed draft falls back to X-RateLimit", hdr(
			"RateLimit", `"default;r=1`, "X-RateLimit-Remaining", "4"),
			Info{Remaining: 4, HasRemaining: true}},
		{"invalid X-RateLimit falls through to X-Rate-Limit", hdr(
			"X-RateLimit-Remaining", "-1", "X-Rate-Limit-Remaining", "6"),
			Info{Remaining: 6, HasRemaining: true}},
		{"draft window kept with legacy limit", hdr(
			"RateLimit-Policy", `"default";w=60`, "X-RateLimit-Limit", "100, 100;w=1"),
			Info{Policy: "default", Limit: 100, Window: time.Minute}},
		{"throttled response with everything", hdr(
			"RateLimit-Policy", `"default";q=10;w=1`, "RateLimit", `"default";r=0;t=1`,
			"Retry-After", "Sun, 06 Nov 1994 08:49:40 GMT", "Date", refDate),
			Info{Policy: "default", Limit: 10, Window: time.Second, Remaining: 0, HasRemaining: true, Reset: time.Second, HasReset: true,
				RetryAfter: 4 * time.Second, HasRetryAfter: true}}, // 3 s between the dates, and the date's second
		{"malformed Retry-After ignored", hdr("Retry-After", "-3", "X-RateLimit-Remaining", "1"),
			Info{Remaining: 1, HasRemaining: true}},
		{"non-canonical keys are not read", http.Header{"x-ratelimit-remaining": {"1"}, "retry-after": {"2"}}, Info{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Parse(tt.h, refNow))
		})
	}
}

// TestParseNoAllocs pins the promise that the client can call Parse on every response for free when
// the response carries no rate-limit field.
func TestParseNoAllocs(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
	}{
		{"empty", http.Header{}},
		{"typical response", hdr("Content-Type", "application/json", "Content-Length", "512", "Date", refDate,
			"Cache-Control", "no-store", "Server", "nginx")},
		{"legacy dialect", hdr("X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "42", "X-RateLimit-Reset", "17")},
		{"delay-seconds Retry-After", hdr("Retry-After", "5")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(100, func() { _ = Parse(tt.h, refNow) })
			assert.Zero(t, allocs)
		})
	}
}

// TestMayHaveFields: the scan that lets Parse skip a response without rate-limit fields never skips
// one that has any.
func TestMayHaveFields(t *testing.T) {
	many := http.Header{}
	for i := range scanBelow {
		many.Set(fmt.Sprintf("X-Other-%d", i), "1")
	}
	tests := []struct {
		name string
		h    http.Header
		want bool
	}{
		{"empty", http.Header{}, false},
		{"ordinary", http.Header{"Content-Type": {"text/plain"}, "Date": {"x"}, "X-Request-Id": {"1"}}, false},
		{"Retry-After", http.Header{"Content-Type": {"text/plain"}, HeaderRetryAfter: {"1"}}, true},
		{"draft", http.Header{HeaderRateLimit: {`"d";r=1`}}, true},
		{"draft policy", http.Header{HeaderRateLimitPolicy: {`"d";q=1;w=1`}}, true},
		{"x-ratelimit", http.Header{HeaderXRemaining: {"1"}}, true},
		{"x-rate-limit", http.Header{headerXDashReset: {"1"}}, true},
		{"older draft", http.Header{headerOldLimit: {"1"}}, true},
		{"many headers are looked up instead", many, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mayHaveFields(tt.h))
		})
	}
}
