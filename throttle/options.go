package throttle

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/dialects"
)

// DefaultMaxKeys is the number of keys a Throttle keeps state for when WithMaxKeys is not given.
const DefaultMaxKeys = 10000

// Option configures a Throttle in New.
type Option interface {
	apply(*config)
}

type config struct {
	keyFunc func(*http.Request) string
	factory func(key string) (Limiter, error)
	maxKeys int
	// maxRoutes bounds the route map (see routes.go).
	maxRoutes int
	onWait    func(req *http.Request, key string, waited time.Duration)
	maxWait   time.Duration
	// maxPause bounds a pause from a server's Retry-After when hasMaxPause.
	maxPause    time.Duration
	hasMaxPause bool
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// credentialKey returns the default key function: the request's host (and port, if the URL has
// one) and a short hash of its Authorization header, if it has one (dialects.Keyer), remembering
// the last credential's hash (Keyer.Func) rather than hashing it on every request.
func credentialKey() func(*http.Request) string { return dialects.Keyer{}.Func() }

// WithKeyFunc sets how the Transport maps a request to the key it is paced and paused by (a
// request can name its key itself with request.WithKey, which takes precedence; a route whose
// bucket a response named is paced by the bucket of the key, see BucketKey). The default is the
// owner of the quota: the request URL's host, lower-cased (including a port when the URL names
// one), followed, when the request carries an Authorization header, by "#" and a short SHA-256
// hash of it (dialects.Keyer), so that two API keys calling one host are paced apart and the
// secret appears in no key. For an API key in a header of its own, pass dialects.Keyer{Header:
// "X-Api-Key"}.Func() (Keyer.Key, hashing each credential once). f is called once per attempt,
// from many goroutines at once, and must not modify the request. A nil f makes New fail with
// ErrInvalidOption.
func WithKeyFunc(f func(*http.Request) string) Option {
	return optionFunc(func(c *config) { c.keyFunc = f })
}

// WithLimiter sets the factory that creates the Limiter of a key the first time the key is used
// (and again after the key's partition was evicted). The default, like a nil factory, is no pace
// at all: only pauses (Retry-After, Pause) hold requests back. A factory may return (nil, nil) to
// leave one key unpaced. A factory error is returned, wrapped, by the wait that needed the key,
// and the factory is asked again next time. The factory runs with the Throttle's partition lock
// held: it must be quick and must not call back into the Throttle.
//
// For example, ten requests per second with bursts of five, per host:
//
//	throttle.WithLimiter(func(string) (throttle.Limiter, error) { return throttle.NewTokenBucket(10, 5) })
func WithLimiter(factory func(key string) (Limiter, error)) Option {
	return optionFunc(func(c *config) { c.factory = factory })
}

// WithMaxKeys bounds the number of keys whose state (limiter and pause) the Throttle keeps; the
// default is DefaultMaxKeys. When a new key arrives and the bound is reached, the least recently
// used partition with no request waiting or in flight is evicted, forgetting its limiter state and
// any pause it had (a server that still wants quiet says so again). When every partition is busy,
// the new key's request fails with ErrTooManyKeys. n below 1 makes New fail with ErrInvalidOption.
func WithMaxKeys(n int) Option {
	return optionFunc(func(c *config) { c.maxKeys = n })
}

// WithMaxRoutes bounds how many routes (a key, a method and a URL path) the Transport remembers the
// bucket of, as responses name it (see BucketKey); the default is DefaultMaxRoutes. Beyond it the
// least recently used route is forgotten, and paced by its key again until a response names its
// bucket anew. 0 remembers none: every request is paced by its key. A negative n makes New fail
// with ErrInvalidOption.
func WithMaxRoutes(n int) Option {
	return optionFunc(func(c *config) { c.maxRoutes = n })
}

// WithWaitObserver sets a function the Transport calls after each attempt that the Throttle held
// back (waited > 0: a pause or the key's limiter made it wait) and then let through, with the
// attempt's request, its key and how long it waited. It is meant for metrics and logs: it runs on
// the request's goroutine, so it must be quick and safe for concurrent use, and must not modify
// req. The default, like nil, observes nothing and reads no extra clock.
func WithWaitObserver(f func(req *http.Request, key string, waited time.Duration)) Option {
	return optionFunc(func(c *config) { c.onWait = f })
}

// WithMaxWait bounds how long a request waits for what the server asked for: when the predicted wait
// for a pause of its key (a server's Retry-After, or Pause) is longer than d, or the key's limiter
// learns its pace from the server (a Learner, such as the throttle/learn learner) and that pace is
// slower than one request per d (the rate the server allows the key, for a ServerRater: not a share
// of it that the limiter leaves to other clients), the wait refuses at once with *WaitTooLongError
// instead of sleeping (the Transport closes the request body and sends nothing). A waiting request whose prediction grows past d is
// refused then. A known pace (a token or leaky bucket) is always waited out, however many requests
// stand in line. The default, 0, waits as long as it takes (bounded only by the request's context).
// A request can set its own maximum with request.WithMaxWait. A negative d makes New fail with
// ErrInvalidOption.
func WithMaxWait(d time.Duration) Option {
	return optionFunc(func(c *config) { c.maxWait = d })
}

// WithMaxPause bounds the pause a server's Retry-After sets on a key: a response asking for a longer
// wait pauses the key for d only, so that one response with a huge Retry-After (a misconfigured
// server's "Retry-After: 999999999999") cannot shut a key off for a day. Set d to the longest
// Retry-After the layer above waits out (client sets it from retry.WithMaxRetryAfter): a response
// that asks for more is given back to its caller by that layer, and the key's other requests hold
// back for d, then ask the server again. 0 means a Retry-After never pauses the key. Pause and
// SetPause are not bounded by it. The default is no bound beyond the 24 hours a Retry-After is
// clamped to when parsed. A negative d makes New fail with ErrInvalidOption.
func WithMaxPause(d time.Duration) Option {
	return optionFunc(func(c *config) { c.maxPause, c.hasMaxPause = d, true })
}
