package main

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/internal/margin"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/throttle"
	"github.com/steadyhttp/steady/throttle/learn"
	"golang.org/x/time/rate"
)

// Client kinds: steady as a new user gets it, and the peers.
const (
	clientSteady    = "steady"        // client.New() with the batch runner's retry settings
	clientAIMD      = "aimd"          // the same stack paced by plain AIMD
	clientCubic     = "cubic"         // the same stack paced by the AWS SDKs' adaptive CUBIC
	clientRetryable = "retryablehttp" // go-retryablehttp with its defaults
	clientXRate     = "xrate"         // net/http paced by golang.org/x/time/rate told the rate, no retries
	clientPhysical  = "clairvoyant"   // the physical limit (not judged)
)

// clientKinds lists the judged client kinds in the sweep's order.
var clientKinds = []string{clientSteady, clientAIMD, clientCubic, clientRetryable, clientXRate}

// The batch runner's retry settings (examples/batch: -attempts 20, backoff from 500 ms doubling to
// 10 s, no elapsed bound, no retry budget), with a max wait long enough for a window of any
// length: the batch default of 10 minutes, or two windows when longer (a sliding window counter
// may ask for up to two windows).
const (
	batchAttempts  = 20
	batchBaseDelay = 500 * time.Millisecond
	batchMaxDelay  = 10 * time.Second
	batchMaxWait   = 10 * time.Minute
)

// maxWaitFor is the max wait of the steady stacks against limit l.
func maxWaitFor(l limitSpec) time.Duration { return max(batchMaxWait, 2*l.Window) }

// toldMargin is what x/time/rate keeps back from the rate it is told (examples/batch's -margin).
const toldMargin = 0.005

// learnerTrace, when set (-trace), receives steady's learner events, one line each.
var learnerTrace io.Writer

// sender sends one request and returns the final response (or the error), as http.Client.Do does.
type sender func(*http.Request) (*http.Response, error)

// newSender returns client i's sender of kind for cell c over base. shared is the clairvoyant,
// for kind clientPhysical.
func newSender(kind string, c cell, base http.RoundTripper, shared throttle.Limiter) (sender, error) {
	wait := maxWaitFor(c.Limit)
	stack := []client.Option{
		client.WithBase(base),
		client.WithRetry(retry.WithMaxAttempts(batchAttempts), retry.WithBaseDelay(batchBaseDelay),
			retry.WithMaxDelay(batchMaxDelay), retry.WithMaxElapsed(0), retry.WithBudget(nil),
			retry.WithMaxRetryAfter(wait)),
		client.WithMaxWait(wait),
	}
	with := func(f func() throttle.Limiter) []client.Option {
		return append(stack, client.WithLimiter(func(string) (throttle.Limiter, error) { return f(), nil }))
	}
	switch kind {
	case clientSteady:
		if w := learnerTrace; w != nil {
			start := time.Now()
			stack = append(stack, client.WithLearner(learn.WithObserver(func(e learn.Event) {
				fmt.Fprintf(w, "%10.3fs %s/%s %s\n", e.At.Sub(start).Seconds(), e.Strategy, e.State, e.Detail)
			})))
		}
		return client.New(stack...).Do, nil
	case clientAIMD:
		return client.New(with(func() throttle.Limiter { return newLawLimiter(newAIMD()) })...).Do, nil
	case clientCubic:
		return client.New(with(func() throttle.Limiter { return newLawLimiter(newAWSCubic()) })...).Do, nil
	case clientPhysical:
		opts := append(stack[:1:1], client.WithMaxWait(0),
			client.WithLimiter(func(string) (throttle.Limiter, error) { return shared, nil }))
		return client.New(opts...).Do, nil
	case clientRetryable:
		rc := retryablehttp.NewClient()
		rc.HTTPClient = &http.Client{Transport: base}
		rc.Logger = nil
		return func(req *http.Request) (*http.Response, error) {
			rreq, err := retryablehttp.FromRequest(req)
			if err != nil {
				return nil, err
			}
			return rc.Do(rreq)
		}, nil
	case clientXRate:
		lim := rate.NewLimiter(rate.Limit(toldRate(c)), 1)
		hc := &http.Client{Transport: base}
		return func(req *http.Request) (*http.Response, error) {
			if err := lim.Wait(req.Context()); err != nil {
				return nil, err
			}
			return hc.Do(req)
		}, nil
	}
	return nil, fmt.Errorf("unknown client kind %q (want one of %v)", kind, clientKinds)
}

// toldRate is the pace x/time/rate is told, per client: the rate the server's documented policy
// sustains (L/W; a sliding window counter's (L−1)/W, one request every other window for L = 1; the
// changing server's published rate, not knowing it will change), less the margin, split evenly
// between the clients sharing the key (their operator knows how many there are).
func toldRate(c cell) float64 {
	r := c.Limit.Rate()
	if c.Server == algorithm.NameSlidingWindow || c.Server == serverCountDenied {
		r = max(float64(c.Limit.Limit-1), 0.5) / c.Limit.Window.Seconds()
	}
	return margin.Rate(r, toldMargin) / float64(c.Clients)
}
