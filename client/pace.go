package client

import "github.com/steadyhttp/steady/throttle"

// defaultLimiter is the pace of a stack given no pace option: none, so only Retry-After pauses hold
// a key back.
func defaultLimiter() func(key string) (throttle.Limiter, error) { return nil }
