// Package ratelimitheader is the one codec for the HTTP headers in which servers describe rate limits.
//
// The client side calls [Parse] (or [RetryAfter]) on every response; the testserver calls [Write] on
// every response it produces. Because both use this package, what the testserver writes is exactly what
// the client reads back.
//
// Understood dialects, in order of preference:
//
//   - the IETF draft structured fields (draft-ietf-httpapi-ratelimit-headers):
//     RateLimit-Policy: "default";q=100;w=60 and RateLimit: "default";r=42;t=17, parsed with
//     github.com/dunglas/httpsfv (policy names may be strings or tokens; the older dictionary form
//     RateLimit: limit=100, remaining=42, reset=17 and integer-valued policies such as 100;w=60 are
//     accepted too);
//   - X-RateLimit-Limit / X-RateLimit-Remaining / X-RateLimit-Reset;
//   - X-Rate-Limit-Limit / X-Rate-Limit-Remaining / X-Rate-Limit-Reset;
//   - RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset (older drafts, plain integers);
//   - Retry-After (delay-seconds or an HTTP-date, measured against the response's Date header).
//
// Servers lie, truncate and misformat: every parser here ignores a malformed, negative or absurd value
// field by field, clamps durations to [MaxDelay], never panics and never fails. All functions are safe
// for concurrent use; nothing in the package holds state.
package ratelimitheader
