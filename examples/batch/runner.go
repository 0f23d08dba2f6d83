package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// maxBodyRead is how much of a response body a worker reads before closing it. A body read to its
// end lets net/http reuse the connection; a longer one costs its connection but never unbounded
// reading.
const maxBodyRead = 1 << 20

// reasonCancelled is the failure reason of a request the run's context ended before it finished
// (or before it started).
const reasonCancelled = "cancelled"

// runner sends n requests from a fixed number of workers and accounts for every one of them.
type runner struct {
	client  *http.Client
	target  string
	method  string
	body    bool // send a JSON body with GetBody
	n       int
	workers int
	timeout time.Duration // per request; 0: none
	onDone  func()        // called after each request ends, from the workers; may be nil
}

// result is what a run achieved. Succeeded plus failures.count() is always n.
type result struct {
	succeeded int
	failures  *tally
	elapsed   time.Duration
	cancelled bool // the run's context ended before every request was sent
}

// run sends the requests and returns when every worker has stopped: all requests ended, or ctx
// ended (the workers' requests in flight are cancelled with it and no new ones start). Requests
// that never finished are counted as failed with reasonCancelled.
func (r *runner) run(ctx context.Context) result {
	var (
		next      atomic.Int64
		succeeded atomic.Int64
		failures  = &tally{}
		wg        sync.WaitGroup
	)
	start := time.Now()
	for range min(r.workers, r.n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(r.n) {
					return
				}
				if reason, ok := r.do(ctx, int(i)); ok {
					succeeded.Add(1)
				} else {
					failures.add(reason, 1)
				}
				if r.onDone != nil {
					r.onDone()
				}
			}
		})
	}
	wg.Wait()
	res := result{succeeded: int(succeeded.Load()), failures: failures, elapsed: time.Since(start)}
	if unfinished := r.n - res.succeeded - failures.count(); unfinished > 0 {
		failures.add(reasonCancelled, unfinished)
	}
	res.cancelled = ctx.Err() != nil
	return res
}

// do sends request i and reports whether it succeeded (a 2xx final response), or why not.
func (r *runner) do(ctx context.Context, i int) (reason string, ok bool) {
	rctx := withTrack(ctx)
	if r.timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, r.timeout)
		defer cancel()
	}
	req, err := r.newRequest(rctx, i)
	if err != nil {
		return "building the request: " + err.Error(), false
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return failureReason(ctx, err, r.timeout), false
	}
	_, rerr := io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyRead))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "status " + resp.Status, false
	}
	if rerr != nil {
		return "reading the response: " + failureReason(ctx, rerr, r.timeout), false
	}
	return "", true
}

// newRequest builds request i; a method with a body gets {"item":i}, replayable through GetBody.
func (r *runner) newRequest(ctx context.Context, i int) (*http.Request, error) {
	var body io.Reader
	if r.body {
		body = bytes.NewReader([]byte(`{"item":` + strconv.Itoa(i) + `}`))
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.target, body)
	if err != nil {
		return nil, err
	}
	if r.body {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "steady-batch")
	return req, nil
}

// failureReason describes why a request failed with err, in words that do not vary from one
// request to the next (so that equal causes are counted together): "cancelled" when the run's
// context ended, a timeout, or the last transport error and why retrying stopped.
func failureReason(runCtx context.Context, err error, timeout time.Duration) string {
	if runCtx.Err() != nil {
		return reasonCancelled
	}
	if errors.Is(err, context.DeadlineExceeded) && timeout > 0 {
		return fmt.Sprintf("timeout (-timeout %v)", timeout)
	}
	var re *retry.Error
	if errors.As(err, &re) {
		if re.Cause != nil && re.Err != nil {
			return fmt.Sprintf("%v (%v)", re.Err, re.Cause)
		}
		if re.Err != nil {
			err = re.Err
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
