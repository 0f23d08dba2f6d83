package client

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/queue"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/throttle"
)

// New returns an *http.Client whose Transport is the steady stack over WithBase's RoundTripper
// (http.DefaultTransport by default), configured by opts. See NewTransport.
func New(opts ...Option) *http.Client {
	return &http.Client{Transport: NewTransport(nil, opts...)}
}

// Validate reports the first option in opts that the stack cannot use, as an error matching
// ErrInvalidOption that names the option and its value, or nil. New and NewTransport never fail;
// call Validate at start-up to fail early instead of on the first request.
func Validate(opts ...Option) error {
	_, err := build(nil, opts)
	return err
}

// Transport is the assembled stack, an http.RoundTripper. It is safe for concurrent use and starts
// no goroutines; it holds no resources beyond the base RoundTripper's idle connections
// (CloseIdleConnections reaches them). Create it with NewTransport (or New); the zero value is not
// usable: its RoundTrip fails with an error matching ErrInvalidOption.
type Transport struct {
	rt       http.RoundTripper
	err      error // a configuration error: every RoundTrip fails with it
	queue    *queue.Queue
	retry    *retry.Transport
	throttle *throttle.Throttle
	breaker  *breaker.Breaker
	keyFunc  func(*http.Request) string
	// countAttempts: an AttemptObserver is present, so every request gets an attempt counter.
	countAttempts bool
}

// NewTransport returns the stack (queue -> retry -> throttle -> base) configured by opts, sending
// attempts through base (http.DefaultTransport when nil, or WithBase's RoundTripper when given).
//
// With no options: no queue, package retry's default attempts and backoff, Retry-After honoured
// with a pause of the whole host, and a learned pace per host (throttle/learn) that follows the server
// (WithLearner; WithTokenBucket, WithLeakyBucket, WithWindowQuota or WithWindowCounter set a
// known pace instead, WithoutPace none). Invalid options do not panic: every RoundTrip of the returned Transport closes
// the request body and fails with an error matching
// ErrInvalidOption (see Validate).
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	t, err := build(base, opts)
	if err != nil {
		return &Transport{err: err}
	}
	return t
}

func build(base http.RoundTripper, opts []Option) (*Transport, error) {
	c := config{base: base}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	if c.base == nil {
		c.base = http.DefaultTransport
	}

	t := &Transport{keyFunc: c.keyFunc}
	topts := []throttle.Option{}
	if c.limiter != nil {
		topts = append(topts, throttle.WithLimiter(c.limiter))
	} else if !c.paceSet {
		topts = append(topts, throttle.WithLimiter(c.learner(nil)))
	}
	if c.keyFunc != nil {
		topts = append(topts, throttle.WithKeyFunc(c.keyFunc))
	}
	if c.maxKeys > 0 {
		topts = append(topts, throttle.WithMaxKeys(c.maxKeys))
	}
	if !c.maxWaitSet {
		c.maxWait = DefaultMaxWait
	}
	topts = append(topts, throttle.WithMaxWait(c.maxWait))
	// A key's pause on Retry-After is bounded by the longest Retry-After the retry layer waits out:
	// a longer one is given back to its caller, and must not shut the key off for longer (issue 13
	// §8). The retry options are read once here, before the retry layer itself is built over the
	// throttle.
	probe, err := retry.NewTransport(nil, c.retryOpts...)
	if err != nil {
		return nil, errors.Join(ErrInvalidOption, err)
	}
	topts = append(topts, throttle.WithMaxPause(probe.MaxRetryAfter()))
	c.maxPause, c.maxPauseSet = probe.MaxRetryAfter(), true
	obs := c.observers
	if len(obs) > 0 {
		topts = append(topts, throttle.WithWaitObserver(func(req *http.Request, key string, waited time.Duration) {
			obs.Throttled(req, key, waited)
		}))
	}
	th, err := throttle.New(topts...)
	if err != nil {
		return nil, errors.Join(ErrInvalidOption, err)
	}
	t.throttle = th
	rt := throttle.NewTransport(c.base, th)
	if c.breakerSet {
		bopts := c.breakerOpts
		if c.keyFunc != nil {
			bopts = append([]breaker.Option{breaker.WithKeyFunc(c.keyFunc)}, bopts...)
		}
		b, err := breaker.New(bopts...)
		if err != nil {
			return nil, errors.Join(ErrInvalidOption, err)
		}
		t.breaker = b
		rt = breaker.NewTransport(rt, b)
	}
	var aobs []AttemptObserver
	for _, o := range obs {
		if a, ok := o.(AttemptObserver); ok {
			aobs = append(aobs, a)
		}
	}
	if len(aobs) > 0 {
		rt = &attemptTransport{next: rt, obs: aobs, keyOf: t.KeyOf}
		t.countAttempts = true
	}

	ropts := c.retryOpts
	if len(obs) > 0 {
		ropts = append(ropts[:len(ropts):len(ropts)], retry.WithObserver(retryObserver{obs}))
	}
	rtr, err := retry.NewTransport(rt, ropts...)
	if err != nil {
		return nil, errors.Join(ErrInvalidOption, err)
	}
	t.retry = rtr
	t.rt = rtr

	if c.maxInFlight > 0 {
		qopts := []queue.Option{queue.WithMaxInFlight(c.maxInFlight)}
		if c.maxWaitingSet {
			qopts = append(qopts, queue.WithMaxWaiting(c.maxWaiting))
		}
		if len(obs) > 0 {
			qopts = append(qopts, queue.WithWaitObserver(func(req *http.Request, waited time.Duration) {
				obs.Queued(req, waited)
			}))
		}
		q, err := queue.New(qopts...)
		if err != nil {
			return nil, errors.Join(ErrInvalidOption, err)
		}
		t.queue = q
		t.rt = queue.NewTransport(t.rt, q)
	}
	return t, nil
}

// RoundTrip sends req through the stack. It follows the http.RoundTripper contract: it never
// modifies req, always closes req's body, returns an error only when it obtained no response, and,
// when it gives up on retrying, returns the last response with a nil error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	if t.rt == nil && t.err == nil {
		t = &Transport{err: fmt.Errorf("%w: Transport not created with NewTransport or New", ErrInvalidOption)}
	}
	if t.err != nil {
		if req != nil && req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, t.err
	}
	if t.countAttempts {
		req = withAttemptCounter(req)
	}
	return t.rt.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the base RoundTripper, if it has that method;
// http.Client.CloseIdleConnections calls it.
func (t *Transport) CloseIdleConnections() {
	if t.rt == nil {
		return
	}
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Throttle returns the stack's throttle, for pausing keys by hand (Throttle.Pause) or reading
// pauses; nil when the Transport was built from invalid options.
func (t *Transport) Throttle() *throttle.Throttle { return t.throttle }

// Breaker returns the stack's circuit breaker, for reading a key's state (Breaker.State); nil
// without WithBreaker or when the Transport was built from invalid options.
func (t *Transport) Breaker() *breaker.Breaker { return t.breaker }

// Queue returns the stack's queue, for its live figures (Queue.Stats); nil without
// WithMaxInFlight or when the Transport was built from invalid options.
func (t *Transport) Queue() *queue.Queue { return t.queue }

// Err reports the configuration error every RoundTrip fails with, or nil when the options were
// valid.
func (t *Transport) Err() error { return t.err }
