package ratelimitheader

import "time"

// Header names written by [Write] and read by [Parse], in canonical MIME form (as http.Header stores
// them), so they can index an http.Header directly.
const (
	// HeaderRetryAfter is Retry-After (RFC 9110 section 10.2.3).
	HeaderRetryAfter = "Retry-After"
	// HeaderRateLimitPolicy is the IETF draft RateLimit-Policy field in canonical form.
	HeaderRateLimitPolicy = "Ratelimit-Policy"
	// HeaderRateLimit is the IETF draft RateLimit field in canonical form.
	HeaderRateLimit = "Ratelimit"
	// HeaderXLimit is X-RateLimit-Limit in canonical form.
	HeaderXLimit = "X-Ratelimit-Limit"
	// HeaderXRemaining is X-RateLimit-Remaining in canonical form.
	HeaderXRemaining = "X-Ratelimit-Remaining"
	// HeaderXReset is X-RateLimit-Reset in canonical form.
	HeaderXReset = "X-Ratelimit-Reset"
)

// Headers that are only read, never written.
const (
	headerDate           = "Date"
	headerXDashLimit     = "X-Rate-Limit-Limit"
	headerXDashRemaining = "X-Rate-Limit-Remaining"
	headerXDashReset     = "X-Rate-Limit-Reset"
	headerOldLimit       = "Ratelimit-Limit"
	headerOldRemaining   = "Ratelimit-Remaining"
	headerOldReset       = "Ratelimit-Reset"
)

// MaxDelay is the largest delay any parser in this package returns: a server that asks for more is
// clamped to it (24h). [Write] clamps the reset fields to it too; Retry-After alone is written
// unclamped ([FormatRetryAfter]), because a client that waits exactly that long must be admitted.
const MaxDelay = 24 * time.Hour

// epochThreshold separates the two meanings of a reset value: a value larger than this (in seconds) is a
// Unix time (GitHub style, 1e9 is September 2001); anything else is a number of seconds from now.
const epochThreshold = 1_000_000_000

// epochMillisThreshold: a reset value larger than this is a Unix time in milliseconds (as some APIs
// send it; 1e12 ms is September 2001, while 1e12 s would be the year 33658).
const epochMillisThreshold = 1_000_000_000_000
