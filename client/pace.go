package client

import (
	"net/http"

	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/throttle"
	"github.com/steadyhttp/steady/throttle/learn"
)

// learner is the pace of a stack given no pace option, and WithLearner's: a learner per key
// (package throttle/learn) that learns the server's limit from its responses (rate-limit headers
// in any dialect the dialects package reads when it sends them, throttles when it does not) and
// paces just under it, logging its transitions on WithLogger's logger at Debug level.
// c.logger is read when a key's learner is made, after every option was applied, so WithLogger may
// come before or after WithLearner.
func (c *config) learner(opts []learn.Option) func(key string) (throttle.Limiter, error) {
	return func(key string) (throttle.Limiter, error) {
		all := make([]learn.Option, 0, len(opts)+3)
		if c.logger != nil {
			all = append(all, learn.WithLogger(c.logger))
		}
		if c.maxPauseSet {
			// The learner's hold on a Retry-After is bounded as the key's pause is: one of a day
			// must not shut the key off for a day in the learner alone (a learn.WithMaxPause
			// among opts takes precedence).
			all = append(all, learn.WithMaxPause(c.maxPause))
		}
		all = append(all, opts...)
		return learn.New(append(all, learn.WithKey(key))...)
	}
}

// WithLearner sets the default pace explicitly, with options: a learner per key (package
// throttle/learn) with one model per key and one strategy in charge at a time (a Retry-After
// pause, the server's declared quota while its headers are believed, learned window cycles, or a
// rate law whose share of throttles is bounded by construction), every transition observable
// (learn.WithObserver, learn.WithLogger) and every constant derived from the measured round trip,
// rate and requests in flight (docs/learner.md). Use it to tune the learning, for example
// learn.WithThrottleStatuses(429, 503) for an API that throttles with 503. Invalid learn options
// make every request fail with their error (see Validate).
// With WithLogger, every learner logs its transitions on that logger at Debug level (a
// learn.WithLogger among opts takes precedence).
func WithLearner(opts ...learn.Option) Option {
	return optionFunc(func(c *config) {
		if _, err := learn.New(opts...); err != nil {
			c.fail("WithLearner: %v", err)
			return
		}
		c.paceSet = true
		c.limiter = c.learner(opts)
	})
}

// WithoutPace turns the local pace off: requests go as fast as they come, and only Retry-After
// pauses hold a key back. (The default learns the server's rate instead; see WithLearner.)
func WithoutPace() Option {
	return optionFunc(func(c *config) {
		c.paceSet = true
		c.limiter = nil
	})
}

// LearnedRate reports the pace, in requests per second, that the learning limiter of key (a host,
// by default) keeps now, and whether there is one: false when the stack paces key some other way
// (a known pace), has not seen key yet, or has forgotten it.
func (t *Transport) LearnedRate(key string) (float64, bool) {
	if t.throttle == nil {
		return 0, false
	}
	if l, ok := t.throttle.Limiter(key).(*learn.Learner); ok {
		return l.Rate(), true
	}
	return 0, false
}

// LearnedLimit reports what the learner of key (the default pace, or WithLearner) believes of the server's limit:
// quota, window, kind, where the belief comes from and how sure it is; false when key is paced some
// other way or has not been seen.
func (t *Transport) LearnedLimit(key string) (learn.Limit, bool) {
	if t.throttle == nil {
		return learn.Limit{}, false
	}
	if l, ok := t.throttle.Limiter(key).(*learn.Learner); ok {
		return l.LearnedLimit(), true
	}
	return learn.Limit{}, false
}

// KeyOf returns the key the stack paces req by (throttle.Throttle.KeyOf): the one request.WithKey
// set in its context; else the key of the quota bucket a response named for its route
// (throttle.BucketKey); else WithKeyFunc's, or WithCredentialKey's, or by default its URL's host
// and a short hash of its Authorization header.
func (t *Transport) KeyOf(req *http.Request) string {
	if t.throttle == nil {
		if k, ok := request.From(req.Context()).Key(); ok {
			return k
		}
		return req.URL.Host
	}
	return t.throttle.KeyOf(req)
}
