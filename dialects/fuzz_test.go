package dialects

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkReading asserts the invariants every reading keeps whatever the input.
func checkReading(t *testing.T, r Reading) {
	t.Helper()
	if r.RetryAfter < 0 || r.RetryAfter > MaxDelay || (!r.HasRetryAfter && r.RetryAfter != 0) {
		t.Fatalf("RetryAfter %v (has %v) out of range", r.RetryAfter, r.HasRetryAfter)
	}
	for _, q := range r.Quotas {
		if q.Limit < 0 || q.Remaining < 0 || q.Window < 0 || q.Window > maxWindow {
			t.Fatalf("bad quota %+v", q)
		}
		if q.Reset < 0 || q.Reset > MaxDelay || (!q.HasReset && q.Reset != 0) || (!q.HasRemaining && q.Remaining != 0) {
			t.Fatalf("bad quota %+v", q)
		}
	}
}

// fuzzHeaders reads a header block "Name: value" per line.
func fuzzHeaders(block string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(block, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			h.Add(k, strings.TrimSpace(v))
		}
	}
	return h
}

var fuzzNow = time.Unix(1_700_000_000, 0)

// FuzzRead feeds arbitrary header blocks, statuses and bodies to every dialect through Read and
// checks the reading's invariants, that the body reads back unchanged, and that the family filter
// reads it as asking every built-in would.
func FuzzRead(f *testing.F) {
	seeds := []struct {
		status        int
		headers, body string
	}{
		{403, "X-GitHub-Request-Id: 1\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: 1700000060", ""},
		{403, "X-GitHub-Request-Id: 1\nX-RateLimit-Remaining: 10", `{"message":"You have exceeded a secondary rate limit"}`},
		{429, "RateLimit-Policy: \"d\";q=100;w=60\nRateLimit: \"d\";r=0;t=30\nRetry-After: 30", ""},
		{200, "Beta-RateLimit: limit=100, remaining=42, reset=17", ""},
		{200, "RateLimit-Limit: 10, 10;w=1, 50;w=60\nRateLimit-Remaining: 9\nRateLimit-Reset: 1", ""},
		{200, "X-RateLimit-Limit: 20\nX-RateLimit-Reset: Tue Feb 16 2021 09:02:42 GMT+0100 (CET)", ""},
		{200, "X-RateLimit-Reset: 2026-03-26T16:00Z\nDate: Thu, 26 Mar 2026 15:59:30 GMT", ""},
		{200, "x-ratelimit-reset-requests: 1m30.5s\nx-ratelimit-remaining-tokens: 5", ""},
		{200, "anthropic-ratelimit-requests-reset: 2025-10-25T12:00:00Z", ""},
		{429, "X-Shopify-Shop-Api-Call-Limit: 40/40\nRetry-After: 2.0", ""},
		{429, "X-RateLimit-Reset-After: 64.57\nX-RateLimit-Scope: global\nRetry-After: 65", ""},
		{429, "x-ms-retry-after-ms: 1500.5\nx-ms-ratelimit-remaining-subscription-reads: 3", ""},
		{409, "Stripe-Should-Retry: false", ""},
		{403, "Sforce-Limit-Info: api-usage=5000/5000; per-app-api-usage=17/250(appName=x)", ""},
		{200, "x-rate-limit-reset: 99999999999999999999", ""},
		{200, "X-RateLimit-Reset: 1e400\nRateLimit: \"a\";t=1e400", ""},
	}
	for _, s := range seeds {
		f.Add(s.status, s.headers, s.body)
	}
	f.Fuzz(func(t *testing.T, status int, headers, body string) {
		resp := &http.Response{StatusCode: status, Header: fuzzHeaders(headers), Body: io.NopCloser(strings.NewReader(body))}
		checkReading(t, Read(resp, fuzzNow))
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, []byte(body)) {
			t.Fatalf("body changed: %q, %v", got, err)
		}
		sameWithAndWithoutFilter(t, status, fuzzHeaders(headers), body)
		for _, d := range Builtins() {
			if r, ok := d.Read(&http.Response{StatusCode: status, Header: fuzzHeaders(headers), Body: http.NoBody}, fuzzNow); ok {
				checkReading(t, r)
			}
		}
	})
}

// FuzzValue feeds one value to every field parser.
func FuzzValue(f *testing.F) {
	for _, s := range []string{"17", "1.5", "1700000060", "1700000001500", "2025-10-25T12:00:00Z", "2026-03-26T16:00Z",
		"Tue, 16 Jan 2024 15:45:00 GMT", "6m0s", "1m30.5s", "20ms", "-1", "1e9", "9999999999h", "43.2", "32/40", "NaN", ""} {
		f.Add(s)
	}
	h := http.Header{"Date": {"Tue, 14 Nov 2023 22:13:20 GMT"}}
	f.Fuzz(func(t *testing.T, v string) {
		for _, p := range []func(string) (time.Duration, bool){
			func(s string) (time.Duration, bool) { d, _, ok := parseReset(s, h, fuzzNow); return d, ok },
			parseGoDuration, parseMillis, parseSecondsValue,
		} {
			if d, ok := p(v); d < 0 || d > MaxDelay || (!ok && d != 0) {
				t.Fatalf("%q: %v %v", v, d, ok)
			}
		}
		if n, ok := parseCount(v); n < 0 || (!ok && n != 0) {
			t.Fatalf("%q: count %d", v, n)
		}
		if l, w := limitWithWindow(v); l < 0 || w < 0 || w > maxWindow {
			t.Fatalf("%q: limit %d window %v", v, l, w)
		}
	})
}

// FuzzCredentialKey checks that a key never contains the credential (when it is long enough not
// to occur by chance in a 16-digit hex string or the host) and is stable.
func FuzzCredentialKey(f *testing.F) {
	f.Add("Bearer sk-abcdefghijklmnop", "X-Api-Key")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, cred, header string) {
		req, _ := http.NewRequest(http.MethodGet, "https://api.example.com/", nil)
		req.Header["Authorization"] = []string{cred}
		k := CredentialKey(req, "")
		if k != CredentialKey(req, "") {
			t.Fatal("unstable key")
		}
		if len(cred) >= 20 && strings.Contains(k, cred) {
			t.Fatalf("key %q contains the credential", k)
		}
		_ = CredentialKey(req, header)
	})
}

// FuzzLimitWithWindow: a limit value without a list or parameters reads the same by the short path
// as by the structured-field parse.
func FuzzLimitWithWindow(f *testing.F) {
	for _, s := range []string{"60", " 60 ", "\t7", "007", "-5", "0", "1.5", "abc", "+5", "9999999999999999", "1e3", `"60"`, "60, 60;w=1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsAny(v, ",;") {
			return
		}
		n, w := limitWithWindow(v)
		ln, lw := limitFromList(v)
		if n != ln || w != lw {
			t.Fatalf("%q: %d %v, the list parse %d %v", v, n, w, ln, lw)
		}
	})
}

// FuzzTrimOWS: trimOWS removes what strings.Trim(s, " \t") does.
func FuzzTrimOWS(f *testing.F) {
	for _, s := range []string{"", " ", "\t \t", " 60 ", "\t7", "a b", " \ta\t "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := trimOWS(s), strings.Trim(s, " \t"); got != want {
			t.Fatalf("trimOWS(%q) = %q, want %q", s, got, want)
		}
	})
}
