package lro

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/internal/ctxsleep"
	"github.com/steadyhttp/steady/retry"
)

// Done reads one answer of the status resource (a 2xx response; Wait closes its body afterwards)
// and says whether the operation has finished, with its result. A non-nil error ends Wait with
// that error wrapped in *Error, finished or not: return one for an operation that failed, or a
// body that cannot be read. It is called on Wait's goroutine, one response at a time.
type Done[T any] func(resp *http.Response) (result T, finished bool, err error)

// Wait follows the long-running operation that resp started: it polls the status resource that
// resp names, with GET requests sent through c, until done says the operation has finished, and
// returns done's result. The status resource is named by Azure-AsyncOperation, else
// Operation-Location (on any 2xx), else Location (on a 202 only); a relative URL is resolved
// against resp's request URL. A poll answered 202 with a new status URL moves the polling there.
// A resp that names no status resource is given to done itself: an API that finished at once
// answers 200 or 201 with the result.
//
// Before each poll, Wait waits what the last response's Retry-After (or retry-after-ms) asks, or
// else an interval that starts at WithInterval and doubles up to WithMaxInterval. Polls are
// ordinary requests of c: with steady's client they are paced, queued and retried like any other,
// so a 429 or a 503 of the status resource is retried by c, not seen by done.
//
// Wait takes over resp's body and closes it. It returns an *Error (see ErrNoStatusURL, ErrStatus,
// ErrWouldExceedDeadline) when it obtains no result: an error status, a transport error, done's
// error, or the end of ctx, which it checks before every wait and never overruns. It is safe to
// call from many goroutines at once (for different operations) as c is.
func Wait[T any](ctx context.Context, c *http.Client, resp *http.Response, done Done[T], opts ...Option) (T, error) {
	var zero T
	if resp == nil || c == nil || done == nil {
		if resp != nil {
			drainAndClose(resp.Body)
		}
		return zero, ErrNilArgument
	}
	cfg := config{interval: DefaultInterval, maxInterval: DefaultMaxInterval}
	for i, o := range opts {
		err := fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i)
		if o != nil {
			err = o.apply(&cfg)
		}
		if err != nil {
			drainAndClose(resp.Body)
			return zero, err
		}
	}
	if cfg.maxInterval < cfg.interval {
		drainAndClose(resp.Body)
		return zero, fmt.Errorf("%w: max interval %v below interval %v", ErrInvalidOption, cfg.maxInterval, cfg.interval)
	}
	p := poller[T]{c: c, done: done, cfg: cfg, next: cfg.interval}
	return p.run(ctx, resp)
}

// poller is the state of one Wait.
type poller[T any] struct {
	c     *http.Client
	done  Done[T]
	cfg   config
	url   string
	polls int
	next  time.Duration // the next wait without Retry-After
}

func (p *poller[T]) fail(status int, err error) error {
	return &Error{URL: p.url, Polls: p.polls, StatusCode: status, Err: err}
}

func (p *poller[T]) run(ctx context.Context, resp *http.Response) (T, error) {
	var zero T
	if !success(resp.StatusCode) {
		drainAndClose(resp.Body)
		return zero, p.fail(resp.StatusCode, ErrStatus)
	}
	p.url = statusURL(resp)
	if p.url == "" {
		result, finished, err := p.answer(resp)
		switch {
		case err != nil:
			return zero, err
		case !finished:
			return zero, p.fail(resp.StatusCode, ErrNoStatusURL)
		}
		return result, nil
	}
	last := resp
	drainAndClose(resp.Body)
	for {
		if err := p.wait(ctx, last); err != nil {
			return zero, p.fail(last.StatusCode, err)
		}
		resp, err := p.poll(ctx)
		if err != nil {
			return zero, p.fail(0, err)
		}
		if !success(resp.StatusCode) {
			drainAndClose(resp.Body)
			return zero, p.fail(resp.StatusCode, ErrStatus)
		}
		result, finished, err := p.answer(resp)
		if err != nil {
			return zero, err
		}
		if finished {
			return result, nil
		}
		if resp.StatusCode == http.StatusAccepted {
			if u := statusURL(resp); u != "" {
				p.url = u
			}
		}
		last = resp
	}
}

// answer gives resp to done and closes its body; done's error comes back as an *Error.
func (p *poller[T]) answer(resp *http.Response) (T, bool, error) {
	defer drainAndClose(resp.Body)
	result, finished, err := p.done(resp)
	if err != nil {
		return result, finished, p.fail(resp.StatusCode, err)
	}
	return result, finished, nil
}

// wait waits before the next poll: last's Retry-After, or the doubling interval. It refuses a
// wait that would pass ctx's deadline.
func (p *poller[T]) wait(ctx context.Context, last *http.Response) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	d := p.next
	if r := dialects.Read(last, now); r.HasRetryAfter {
		d = r.RetryAfter
	} else {
		p.next = min(2*p.next, p.cfg.maxInterval)
	}
	if deadline, ok := ctx.Deadline(); ok && !now.Add(d).Before(deadline) {
		return ErrWouldExceedDeadline
	}
	return ctxsleep.Sleep(ctx, d)
}

// poll sends one GET of the status resource.
func (p *poller[T]) poll(ctx context.Context) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range p.cfg.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	p.polls++
	return p.c.Do(req)
}

// statusURL returns the absolute URL of the status resource resp names, or "".
func statusURL(resp *http.Response) string {
	raw := resp.Header.Get("Azure-AsyncOperation")
	if raw == "" {
		raw = resp.Header.Get("Operation-Location")
	}
	if raw == "" && resp.StatusCode == http.StatusAccepted {
		raw = resp.Header.Get("Location")
	}
	if raw == "" {
		return ""
	}
	if resp.Request == nil || resp.Request.URL == nil {
		return raw
	}
	u, err := resp.Request.URL.Parse(raw)
	if err != nil {
		return raw // the GET's error will say why
	}
	return u.String()
}

func success(code int) bool { return code >= 200 && code < 300 }

// drainAndClose reads at most retry.DrainLimit bytes of body, so that its connection can be
// reused, and closes it.
func drainAndClose(body io.ReadCloser) {
	if body == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body, retry.DrainLimit)
	_ = body.Close()
}
