package ratelimitheader_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// A client reads whatever dialect the server speaks.
func ExampleParse() {
	now := time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=100;w=60`)
	h.Set("RateLimit", `"default";r=42;t=17`)
	h.Set("Retry-After", "3")

	info := ratelimitheader.Parse(h, now)
	fmt.Println(info.Policy, info.Limit, info.Window, info.Remaining, info.Reset, info.RetryAfter)

	// GitHub style: X-RateLimit-Reset is a Unix time, measured against the response's Date.
	gh := http.Header{}
	gh.Set("Date", "Sat, 01 Mar 2025 12:00:00 GMT")
	gh.Set("X-RateLimit-Limit", "5000")
	gh.Set("X-RateLimit-Remaining", "4999")
	gh.Set("X-RateLimit-Reset", fmt.Sprint(now.Add(40*time.Minute).Unix()))
	info = ratelimitheader.Parse(gh, now)
	fmt.Println(info.Limit, info.Remaining, info.Reset)
	// Output:
	// default 100 1m0s 42 17s 3s
	// 5000 4999 40m0s
}

// A server advertises its limit; windows that are not whole seconds keep their rate.
func ExampleWrite() {
	h := http.Header{}
	ratelimitheader.Write(h, ratelimitheader.Fields{
		Limit:      10,
		Window:     100 * time.Millisecond,
		Remaining:  0,
		Reset:      40 * time.Millisecond,
		RetryAfter: 40 * time.Millisecond,
	})
	for _, k := range []string{"Ratelimit-Policy", "Ratelimit", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Retry-After"} {
		fmt.Printf("%s: %s\n", k, h.Get(k))
	}
	// Output:
	// Ratelimit-Policy: "default";q=100;w=1
	// Ratelimit: "default";r=0;t=1
	// X-Ratelimit-Limit: 10
	// X-Ratelimit-Remaining: 0
	// X-Ratelimit-Reset: 1
	// Retry-After: 1
}

func ExampleParseRetryAfter() {
	now := time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)
	fmt.Println(ratelimitheader.ParseRetryAfter("120", "", now))
	// An HTTP-date is measured against the response's Date header, not the client's clock, and
	// rounded up by the second its instant may lie beyond the date written.
	fmt.Println(ratelimitheader.ParseRetryAfter("Sat, 01 Mar 2025 09:00:30 GMT", "Sat, 01 Mar 2025 09:00:00 GMT", now))
	fmt.Println(ratelimitheader.ParseRetryAfter("-5", "", now))
	fmt.Println(ratelimitheader.ParseRetryAfter("31536000", "", now))
	// Output:
	// 2m0s true
	// 31s true
	// 0s false
	// 24h0m0s true
}

func ExampleFormatRetryAfter() {
	fmt.Println(ratelimitheader.FormatRetryAfter(0))
	fmt.Println(ratelimitheader.FormatRetryAfter(1500 * time.Millisecond))
	fmt.Println(ratelimitheader.FormatRetryAfter(time.Minute))
	// Output:
	// 1
	// 2
	// 60
}
