package dialects_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/steadyhttp/steady/dialects"
)

// A GitHub 403 with nothing remaining is a throttle that lasts until x-ratelimit-reset (measured
// against the response's Date header), not a permission error.
func ExampleRead() {
	resp := &http.Response{
		StatusCode: http.StatusForbidden,
		Header: http.Header{
			"Date":                  {"Tue, 20 Aug 2013 14:50:41 GMT"},
			"X-Github-Media-Type":   {"github.v3"},
			"X-Ratelimit-Limit":     {"60"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset":     {"1377013266"},
		},
		Body: io.NopCloser(strings.NewReader(`{"message":"API rate limit exceeded"}`)),
	}
	r := dialects.Read(resp, time.Now())
	fmt.Println(r.Dialect, r.Throttled, r.RetryAfter)
	// Output: github true 50m25s
}

// OpenAI declares two quotas; the first is the request quota.
func ExampleReading_Exhausted() {
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
	resp.Header.Set("x-ratelimit-limit-requests", "60")
	resp.Header.Set("x-ratelimit-remaining-requests", "59")
	resp.Header.Set("x-ratelimit-limit-tokens", "150000")
	resp.Header.Set("x-ratelimit-remaining-tokens", "0")
	resp.Header.Set("x-ratelimit-reset-tokens", "6m0s")
	r := dialects.Read(resp, time.Now())
	q, _ := r.Exhausted()
	fmt.Println(r.Quotas[0].Unit, r.Quotas[0].Remaining, "|", q.Unit, q.Reset)
	// Output: requests 59 | tokens 6m0s
}

// Each credential on a host gets its own throttle key; the secret never appears in it.
func ExampleCredentialKey() {
	req, _ := http.NewRequest(http.MethodGet, "https://api.github.com/user", nil)
	req.Header.Set("Authorization", "Bearer ghp_example")
	key := dialects.CredentialKey(req, "")
	fmt.Println(key[:len("api.github.com#")], len(key), strings.Contains(key, "ghp_"))
	// Output: api.github.com# 31 false
}

// A Reader forces a dialect for a host whose responses do not say which API they are.
func ExampleNewReader() {
	r, err := dialects.NewReader(dialects.ForHost("ghe.example.com", "github"), dialects.WithThrottleStatus(429, 503))
	if err != nil {
		panic(err)
	}
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(`{"message":"You have exceeded a secondary rate limit."}`))}
	resp.Request, _ = http.NewRequest(http.MethodGet, "https://ghe.example.com/api/v3/user", nil)
	rd := r.Read(resp, time.Now())
	fmt.Println(rd.Dialect, rd.Throttled, rd.RetryAfter)
	// Output: github true 1m0s
}
