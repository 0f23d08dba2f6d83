package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/time/rate"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
)

// clientKind names one of the clients the benchmark compares.
type clientKind string

// The clients.
const (
	// steadyLearning is client.New with no pace option: its default pace learns the server's rate.
	steadyLearning clientKind = "steady-learning"
	// steadyTold is client.New told the server's published policy less the margin, exactly as
	// examples/batch -rate R -burst B, -quota L/W or -counter L/W configures it (see toldPaceFor).
	steadyTold clientKind = "steady-told"
	// retryableHTTP is go-retryablehttp with its default retry policy.
	retryableHTTP clientKind = "retryablehttp"
	// xrate is plain net/http paced by golang.org/x/time/rate told the server's rate and burst
	// less the margin (toldPaceFor; an even pace for the window algorithms and the counter),
	// without retries.
	xrate clientKind = "xrate"
)

// allClients are the clients in the order the table lists them.
var allClients = []clientKind{steadyLearning, steadyTold, retryableHTTP, xrate}

// kindNames returns the kinds as strings.
func kindNames(kinds []clientKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

// joinKinds returns the kinds separated by commas.
func joinKinds(kinds []clientKind) string { return strings.Join(kindNames(kinds), ",") }

// The steady clients' retry policy: examples/batch's (20 attempts, full-jitter backoff from 500ms
// capped at 10s, no bound on a request's total time, no retry budget), so that a batch survives a
// throttling server without dropping items.
const (
	steadyAttempts  = 20
	steadyBaseDelay = 500 * time.Millisecond
	steadyMaxDelay  = 10 * time.Second
)

// maxBodyRead bounds how much of a response body a worker reads before closing it.
const maxBodyRead = 1 << 20

// peer is one client under test, built fresh for one run so that nothing learned or pooled carries
// over from the previous run. Its methods are safe for concurrent use.
type peer struct {
	kind clientKind
	// send sends one GET to target and reports whether it ended in a 2xx response.
	send func(ctx context.Context, target string) bool
	// retries counts attempts after the first, as the client reports them.
	retries atomic.Int64
	// learned reports the rate the client paces a key (host) at after the run; nil for the
	// clients that learn nothing.
	learned func(host string) (float64, bool)
	base    http.RoundTripper
}

// close releases the peer's idle connections.
func (p *peer) close() {
	if c, ok := p.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// newPeer builds a client of kind for a run against the server setup s with cfg's settings. Every
// client goes out on the same kind of transport (newBaseTransport), so the table compares policies,
// not connection pools.
func newPeer(kind clientKind, cfg *config, s setup) (*peer, error) {
	return newPeerOn(kind, toldPaceFor(s, cfg.margin), newBaseTransport(cfg.workers))
}

// newPeerOn builds a client of kind whose attempts go out on base; the told clients pace
// themselves with told.
func newPeerOn(kind clientKind, told toldPace, base http.RoundTripper) (*peer, error) {
	p := &peer{kind: kind, base: base}
	switch kind {
	case steadyLearning, steadyTold:
		return p, p.buildSteady(told)
	case retryableHTTP:
		rc := retryablehttp.NewClient()
		rc.Logger = nil
		rc.HTTPClient = &http.Client{Transport: p.base}
		rc.RequestLogHook = func(_ retryablehttp.Logger, _ *http.Request, attempt int) {
			if attempt > 0 {
				p.retries.Add(1)
			}
		}
		p.send = func(ctx context.Context, target string) bool {
			req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				return false
			}
			resp, err := rc.Do(req)
			return err == nil && drain(resp)
		}
		return p, nil
	case xrate:
		// x/time/rate has no window primitive: against a window algorithm or a counter it gets the
		// even pace.
		lim := rate.NewLimiter(rate.Limit(told.rate), told.burst)
		hc := &http.Client{Transport: p.base}
		p.send = func(ctx context.Context, target string) bool {
			if lim.Wait(ctx) != nil {
				return false
			}
			return get(ctx, hc, target)
		}
		return p, nil
	}
	return nil, fmt.Errorf("unknown client %q", kind)
}

// buildSteady makes p a steady client with examples/batch's retry policy: learning (client.New's
// default pace), or told the server's policy (told: a window quota or a window counter when it
// has one, else a token bucket), as examples/batch -quota L/W, -counter L/W or -rate R -burst B
// configures it.
func (p *peer) buildSteady(told toldPace) error {
	opts := []client.Option{
		client.WithRetry(
			retry.WithMaxAttempts(steadyAttempts),
			retry.WithBaseDelay(steadyBaseDelay),
			retry.WithMaxDelay(steadyMaxDelay),
			retry.WithMaxElapsed(0),
			retry.WithBudget(nil),
		),
		client.WithObserver(retryCounter{&p.retries}),
	}
	// The learning client takes no pace option: client.New's default pace learns the server's
	// rate (an adaptive limiter per host).
	switch {
	case p.kind != steadyTold:
	case told.usesQuota():
		opts = append(opts, client.WithWindowQuota(told.quotaLimit, told.quotaWindow))
	case told.usesCounter():
		opts = append(opts, client.WithWindowCounter(told.counterLimit, told.counterWindow))
	default:
		opts = append(opts, client.WithTokenBucket(told.rate, told.burst))
	}
	t := client.NewTransport(p.base, opts...)
	if err := t.Err(); err != nil {
		return err
	}
	hc := &http.Client{Transport: t}
	p.send = func(ctx context.Context, target string) bool { return get(ctx, hc, target) }
	if p.kind == steadyLearning {
		p.learned = t.LearnedRate
	}
	return nil
}

// retryCounter is the client.Observer that counts retries into n.
type retryCounter struct{ n *atomic.Int64 }

// Attempt does nothing.
func (retryCounter) Attempt(*http.Request, int) {}

// Queued does nothing.
func (retryCounter) Queued(*http.Request, time.Duration) {}

// Throttled does nothing.
func (retryCounter) Throttled(*http.Request, string, time.Duration) {}

// GaveUp does nothing.
func (retryCounter) GaveUp(*http.Request, int, retry.Reason, error) {}

// Retry counts one retry.
func (c retryCounter) Retry(*http.Request, int, retry.Reason, time.Duration) { c.n.Add(1) }

// get sends one GET to target through hc and reports whether it ended in a 2xx response.
func get(ctx context.Context, hc *http.Client, target string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false
	}
	req.Header.Set("User-Agent", "steady-goodput")
	resp, err := hc.Do(req)
	return err == nil && drain(resp)
}

// drain reads (bounded) and closes resp's body, so the connection is reused, and reports whether
// the response was a 2xx read to its end.
func drain(resp *http.Response) bool {
	_, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyRead))
	_ = resp.Body.Close()
	return err == nil && resp.StatusCode >= 200 && resp.StatusCode <= 299
}

// newBaseTransport returns the transport attempts go out on: http.DefaultTransport's settings,
// keeping one idle connection per worker (as examples/batch does).
func newBaseTransport(workers int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = workers
	t.MaxIdleConns = max(t.MaxIdleConns, workers)
	return t
}
