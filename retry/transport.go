package retry

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/internal/ctxsleep"
	"github.com/steadyhttp/steady/internal/startedat"
	"github.com/steadyhttp/steady/request"
)

// Transport is an http.RoundTripper that retries failed attempts of a request through the next
// RoundTripper, following the rules of the package documentation. It is safe for concurrent use
// and starts no goroutines: every wait happens on the goroutine of RoundTrip and ends with the
// request's context.
//
// A request that succeeds on its first attempt costs no allocation and no copy: it is passed to
// the next RoundTripper as it is (unless WithIdempotencyKeys must add a header).
//
// Create it with NewTransport; the zero value is not usable (its RoundTrip fails with an error
// matching ErrInvalidOption).
type Transport struct {
	next    http.RoundTripper
	started startedat.RoundTripper // next, when it says when it began an attempt; else nil
	cfg     config
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport returns a Transport that sends attempts through next (http.DefaultTransport when
// nil), configured by opts. An invalid option yields an error wrapping ErrInvalidOption.
func NewTransport(next http.RoundTripper, opts ...Option) (*Transport, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	cfg := defaultConfig()
	for i, o := range opts {
		if o == nil {
			return nil, invalid("NewTransport: option %d is nil", i)
		}
		if err := o.apply(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.maxDelay < cfg.baseDelay {
		return nil, invalid("NewTransport: max delay %v is below base delay %v", cfg.maxDelay, cfg.baseDelay)
	}
	if !cfg.budgetSet {
		b, err := NewBudget(DefaultBudgetTokens, DefaultBudgetRatio)
		if err != nil {
			return nil, fmt.Errorf("retry: default budget: %w", err)
		}
		cfg.budget = b
	}
	started, _ := next.(startedat.RoundTripper)
	return &Transport{next: next, started: started, cfg: cfg}, nil
}

// MaxRetryAfter returns the longest Retry-After the Transport waits out (WithMaxRetryAfter). A layer
// below that pauses on Retry-After uses it as its bound (client passes it to throttle.WithMaxPause).
func (t *Transport) MaxRetryAfter() time.Duration { return t.cfg.maxRetryAfter }

// Budget returns the Transport's retry budget, nil when disabled with WithBudget(nil).
func (t *Transport) Budget() *Budget { return t.cfg.budget }

// CloseIdleConnections closes the idle connections of the next RoundTripper, when it has such a
// method (as *http.Transport does), so that http.Client.CloseIdleConnections reaches through.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req, retrying failed attempts as the package documentation describes. It returns
// a response with a nil error whenever it has one (also the last failed one when it gives up), and
// otherwise an error: *Error once retrying was considered, or the next RoundTripper's error as it
// is when the single attempt failed in a way that is not retried. It closes req's body on every
// path and never modifies req.
//
// A failed response is drained and closed before the wait for the next attempt, so its connection
// serves other requests meanwhile. If the request's context ends during that wait, RoundTrip
// returns at once with an *Error wrapping the context's error and no response: a response whose
// request context has ended could not be read anyway.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	if t == nil || t.next == nil {
		closeRequestBody(req)
		return nil, fmt.Errorf("%w: Transport not created with NewTransport", ErrInvalidOption)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	lim, err := t.limitsOf(ctx)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	sent := req
	if t.cfg.idempotencyKeys && needsKey(req) {
		sent = req.Clone(ctx)
		if sent.Header == nil {
			sent.Header = make(http.Header, 1)
		}
		sent.Header.Set(HeaderIdempotencyKey, newIdempotencyKey())
	}
	if obs := t.cfg.observer; obs != nil {
		obs.Attempt(sent, 1)
	}
	var (
		resp  *http.Response
		began requestStart
	)
	if t.started != nil && lim.attemptTimeout <= 0 {
		resp, began.at, err = t.started.RoundTripStartedAt(sent) // the layer below read the clock already
	} else {
		began.since, began.read = sinceOrigin(), true
		resp, err = sendAttempt(t.next, sent, lim.attemptTimeout)
	}
	if resp == nil && err == nil {
		err = ErrNoResponse
	}
	if ctx.Err() != nil {
		return resp, err
	}
	if !t.failed(resp, err) {
		if b := t.cfg.budget; err == nil && b != nil && b.n.Load() != 0 { // else all keys are full
			b.Succeeded(budgetKeyOf(req), time.Now())
		}
		return resp, err
	}
	return t.retry(ctx, req, sent, began, lim, resp, err)
}

// requestStart is when a request began, read once on every request and needed only when it is
// retried: the time the layer below returned (startedat.RoundTripper), or else this layer's own
// sinceOrigin reading.
type requestStart struct {
	at    time.Time     // the layer below's reading; zero when it gave none
	since time.Duration // sinceOrigin's reading, when read
	read  bool          // since was read
}

// time returns the start as a time, given now, a reading of the clock taken later. A start that
// nobody read was a moment before the attempt's answer: now.
func (s requestStart) time(now time.Time) time.Time {
	switch {
	case !s.at.IsZero():
		return s.at
	case s.read:
		return startOf(s.since, now)
	default:
		return now
	}
}

// clockOrigin is the origin of sinceOrigin's readings.
var clockOrigin = time.Now()

// sinceOrigin reads the monotonic clock alone, as the time since clockOrigin: half the cost of
// time.Now, which reads the wall clock too. A request's start is read so, on every request, and
// made a time (startOf) only on the slow path, when a retry is considered.
func sinceOrigin() time.Duration { return time.Since(clockOrigin) }

// startOf is the time at which a request that began at began (a sinceOrigin reading) started,
// from now, a reading of the clock taken later (the two differ by their monotonic readings).
func startOf(began time.Duration, now time.Time) time.Time {
	return now.Add(began - now.Sub(clockOrigin))
}

// limits are what bounds one logical request: the Transport's options, or the request's own
// settings (package request) where it has them.
type limits struct {
	maxAttempts    int
	attemptTimeout time.Duration
}

// limitsOf returns the limits of a request with context ctx, or the error of its invalid settings.
func (t *Transport) limitsOf(ctx context.Context) (limits, error) {
	lim := limits{maxAttempts: t.cfg.maxAttempts, attemptTimeout: t.cfg.attemptTimeout}
	set := request.From(ctx)
	if err := set.Err(); err != nil {
		return lim, err
	}
	if n, ok := set.Attempts(); ok {
		lim.maxAttempts = n
	}
	if d, ok := set.AttemptTimeout(); ok {
		lim.attemptTimeout = d
	}
	return lim, nil
}

// failed reports whether an outcome is a failure worth retrying. A response of 400 or more is
// also read in the dialect of the API that sent it (package dialects): what it calls a throttle
// (GitHub's 403 with its quota used up, or a secondary limit) is retried like a 429, and its
// permission (Stripe-Should-Retry) overrides the status either way. A Classifier decides alone.
func (t *Transport) failed(resp *http.Response, err error) bool {
	if t.cfg.classifier != nil {
		return t.cfg.classifier(resp, err)
	}
	if err != nil {
		return RetryableError(err)
	}
	if resp == nil {
		return false
	}
	if resp.StatusCode < 400 {
		return t.cfg.statuses.has(resp.StatusCode)
	}
	r := t.read(resp, time.Now())
	switch r.Retry {
	case dialects.RetryForbidden:
		return false
	case dialects.RetryAllowed:
		return true
	}
	return r.Throttled || t.cfg.statuses.has(resp.StatusCode)
}

// read reads resp in its API's dialect, with WithDialects' Reader or the built-in recognition.
func (t *Transport) read(resp *http.Response, now time.Time) dialects.Reading {
	if t.cfg.dialects != nil {
		return t.cfg.dialects.Read(resp, now)
	}
	return dialects.Read(resp, now)
}

// retry is the slow path: attempt 1 of orig, begun at began, sent as sent, failed
// with resp or err.
func (t *Transport) retry(ctx context.Context, orig, sent *http.Request, began requestStart, lim limits,
	resp *http.Response, err error) (*http.Response, error) {
	start := began.time(time.Now())
	obs := t.cfg.observer
	key := budgetKeyOf(orig)
	var (
		hist  []Attempt
		sched *backoff.ExponentialBackOff
	)
	for attempt := 1; ; attempt++ {
		if err != nil && resp != nil { // a RoundTripper broke its contract: keep the error
			drainAndClose(resp.Body)
			resp = nil
		}
		now := time.Now()
		reason := Reason{Err: err}
		if resp != nil {
			reason.Status = resp.StatusCode
			// The wait the server asked for, as its dialect says it: Retry-After, retry-after-ms,
			// or the reset of an exhausted quota (GitHub's primary limit).
			r := t.read(resp, now)
			reason.RetryAfter, reason.HasRetryAfter, reason.Throttled = r.RetryAfter, r.HasRetryAfter, r.Throttled
			reason.retryAfterGrain = r.RetryAfterGrain
		}
		hist = append(hist, Attempt{Status: reason.Status, Err: err})
		wait, cause := t.plan(ctx, sent, resp, reason, attempt, lim.maxAttempts, start, now, &sched, key)
		if cause != nil {
			if obs != nil {
				obs.GaveUp(sent, attempt, reason, cause)
			}
			if resp != nil {
				return resp, nil
			}
			return nil, newError(orig, hist, err, cause)
		}
		hist[len(hist)-1].Wait = wait
		if obs != nil {
			obs.Retry(sent, attempt, reason, wait)
		}
		if resp != nil {
			drainAndClose(resp.Body)
			resp = nil
		}
		if werr := ctxsleep.Sleep(ctx, wait); werr != nil {
			if obs != nil {
				obs.GaveUp(sent, attempt, reason, werr)
			}
			return nil, newError(orig, hist, werr, nil)
		}
		next, gerr := attemptRequest(sent)
		if gerr != nil {
			gerr = fmt.Errorf("retry: GetBody: %w", gerr)
			if obs != nil {
				obs.GaveUp(sent, attempt, reason, gerr)
			}
			return nil, newError(orig, hist, gerr, nil)
		}
		sent = next
		if obs != nil {
			obs.Attempt(sent, attempt+1)
		}
		resp, err = sendAttempt(t.next, sent, lim.attemptTimeout)
		if resp == nil && err == nil {
			err = ErrNoResponse
		}
		if ctx.Err() != nil || !t.failed(resp, err) {
			if err != nil {
				hist = append(hist, Attempt{Err: err})
				return nil, newError(orig, hist, err, nil)
			}
			if ctx.Err() == nil && t.cfg.budget != nil {
				t.cfg.budget.Succeeded(key, time.Now())
			}
			return resp, nil
		}
	}
}

// refusedByItsLimit reports whether resp is a 403 its API's dialect reads as a rate limit's refusal
// (GitHub's 403 with the quota used up or a secondary limit, Salesforce's REQUEST_LIMIT_EXCEEDED):
// like a 429, it proves the request was not processed, so any method may be sent again. Only a
// 403: a 503 or 504 that a Reader counts as a throttle (dialects.WithThrottleStatus) may follow a
// request a server behind a gateway did process, and keeps the rule of MaySendAgain.
func refusedByItsLimit(resp *http.Response, reason Reason) bool {
	return reason.Throttled && resp != nil && resp.StatusCode == http.StatusForbidden
}

// plan decides whether attempt, which failed with resp (or reason.Err), is followed by another, and
// after which wait; a non-nil cause says why not.
func (t *Transport) plan(ctx context.Context, sent *http.Request, resp *http.Response, reason Reason,
	attempt, maxAttempts int, start, now time.Time, sched **backoff.ExponentialBackOff, key string) (time.Duration, error) {
	cfg := &t.cfg
	if attempt >= maxAttempts {
		return 0, ErrAttemptsExhausted
	}
	if !Replayable(sent) {
		return 0, ErrNotReplayable
	}
	if !refusedByItsLimit(resp, reason) && !MaySendAgainAfter(sent, resp, reason.Err, reason.HasRetryAfter) {
		return 0, ErrNotIdempotent
	}
	var wait, floor time.Duration
	// A Retry-After of 0 (or a date gone by) names no time to wait: a server that asks for no wait
	// and refuses again would draw a retry storm (a limiter writing its window's end truncated to
	// the second answered "retry now" 20 times in 300 ms until the request was given up). The
	// backoff decides then, as without one.
	serverPaced := reason.HasRetryAfter && reason.RetryAfter > 0
	if serverPaced {
		if reason.RetryAfter-reason.retryAfterGrain > cfg.maxRetryAfter {
			// (A date a whole bound away reads as the bound and its second: it is waited out.)
			return 0, ErrRetryAfterTooLong
		}
		floor = reason.RetryAfter
		wait = AddJitter(floor, cfg.retryAfterJitter)
	} else {
		if *sched == nil {
			*sched = newSchedule(cfg.baseDelay, cfg.maxDelay)
		}
		wait = fullJitter((*sched).NextBackOff())
	}
	if deadline, ok := ctx.Deadline(); ok && !now.Add(wait).Before(deadline) {
		if !serverPaced || !now.Add(floor).Before(deadline) {
			return 0, ErrWouldExceedDeadline
		}
		wait = floor // the jitter would pass the deadline; the server's own delay does not
	}
	if cfg.maxElapsed > 0 && now.Add(wait).Sub(start) > cfg.maxElapsed {
		return 0, ErrMaxElapsed
	}
	if !serverPaced && cfg.budget != nil && !cfg.budget.AllowRetry(key, now) {
		return 0, ErrBudgetExhausted
	}
	return wait, nil
}

// budgetKeyOf is the key of req in the retry budget: its host.
func budgetKeyOf(req *http.Request) string {
	if req.URL != nil && req.URL.Host != "" {
		return req.URL.Host
	}
	return req.Host
}
