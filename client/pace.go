package client

import (
	"net/http"

	"github.com/steadyhttp/steady/throttle"
)

// defaultLimiter is the pace of a stack given no pace option: an adaptive limiter per key that
// learns the server's rate from its responses (rate-limit headers when it sends them, 429s when it
// does not) and paces just under it.
func defaultLimiter() func(key string) (throttle.Limiter, error) { return throttle.AdaptiveFactory() }

// WithAdaptive sets the default pace explicitly, with options: an adaptive limiter per key
// (throttle.NewAdaptive) that learns the server's rate. Use it to tune the learning, for example
// throttle.WithThrottleStatuses(429, 503) for an API that throttles with 503. Invalid adaptive
// options make every request fail with their error.
func WithAdaptive(opts ...throttle.AdaptiveOption) Option {
	return optionFunc(func(c *config) {
		c.paceSet = true
		c.limiter = throttle.AdaptiveFactory(opts...)
	})
}

// WithoutPace turns the local pace off: requests go as fast as they come, and only Retry-After
// pauses hold a key back. (The default learns the server's rate instead; see WithAdaptive.)
func WithoutPace() Option {
	return optionFunc(func(c *config) {
		c.paceSet = true
		c.limiter = nil
	})
}

// LearnedRate reports the pace, in requests per second, that the adaptive limiter of key (a host,
// by default) keeps now, and whether there is one: false when the stack paces key some other way,
// has not seen key yet, or has forgotten it.
func (t *Transport) LearnedRate(key string) (float64, bool) {
	if t.throttle == nil {
		return 0, false
	}
	if a, ok := t.throttle.Limiter(key).(*throttle.Adaptive); ok {
		return a.Rate(), true
	}
	return 0, false
}

// KeyOf returns the key the stack paces req by: its URL's host, or WithKeyFunc's.
func (t *Transport) KeyOf(req *http.Request) string {
	if t.keyFunc != nil {
		return t.keyFunc(req)
	}
	return req.URL.Host
}
