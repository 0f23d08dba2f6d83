package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/steadyhttp/steady/retry"
)

// maxBodyRead is how much of a response body a worker reads before closing it, when the body is
// not digested (-output-body digest reads it all): a body read to its end lets net/http reuse the
// connection; a longer one costs its connection but never unbounded reading or memory.
const maxBodyRead = 1 << 20

// reasonCancelled is the failure reason of a request the run's context ended before it finished
// (or before it started), or that an interrupted run never started.
const reasonCancelled = "cancelled"

// reasonBadLine is the failure reason of an input line that is not a request (its record says why).
const reasonBadLine = "bad input line"

// reasonUnread is the failure reason of the requests of an input that could not be read to its end.
const reasonUnread = "input not read to its end"

// runner sends the requests of a source from a fixed number of workers and accounts for every one
// of them.
type runner struct {
	client *http.Client
	src    source
	// total is how many requests the source holds, or -1 when that is known only at its end
	// (stdin).
	total   int
	workers int
	timeout time.Duration // per request; 0: none
	// out receives a record of every request that ends (not of those cancelled); nil without
	// -output. body and headers say what the records keep.
	out     *resultWriter
	body    bodyMode
	headers bool
	// drain, when closed, stops the run from starting requests; those in flight finish.
	drain <-chan struct{}
	// onDone is called after each request ends, from the workers; may be nil.
	onDone func()
	// onBadLine is called for each input line that is not a request; may be nil.
	onBadLine func(it item)
}

// result is what a run achieved. Succeeded plus failures.count() is always requests.
type result struct {
	requests  int
	succeeded int
	failures  *tally
	elapsed   time.Duration
	// cancelled reports that the run stopped before every request was sent: its context ended, it
	// was drained, or the output failed.
	cancelled bool
	// outErr is the output's first write error, which stopped the run.
	outErr error
}

// run sends the requests and returns when every worker has stopped: the source is exhausted, the
// run is drained (the requests in flight finish, no new one starts), the output fails (likewise),
// or ctx ended (the requests in flight are cancelled with it). Requests that never finished are
// counted as failed with reasonCancelled.
func (r *runner) run(ctx context.Context) result {
	var (
		taken     atomic.Int64
		succeeded atomic.Int64
		failures  = &tally{}
		wg        sync.WaitGroup
		outFailed = make(chan struct{})
		failOnce  sync.Once
		outErr    error
	)
	stopped := func() bool {
		select {
		case <-ctx.Done():
			return true
		case <-r.drain:
			return true
		case <-outFailed:
			return true
		default:
			return false
		}
	}
	workers := r.workers
	if r.total >= 0 {
		workers = min(workers, r.total)
	}
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for !stopped() {
				it, ok := r.src.next()
				if !ok {
					return
				}
				taken.Add(1)
				reason, ok, err := r.do(ctx, it)
				if ok {
					succeeded.Add(1)
				} else {
					failures.add(reason, 1)
				}
				if err != nil {
					failOnce.Do(func() { outErr = err; close(outFailed) })
				}
				if r.onDone != nil {
					r.onDone()
				}
			}
		})
	}
	wg.Wait()
	res := result{requests: r.total, succeeded: int(succeeded.Load()), failures: failures, elapsed: time.Since(start), outErr: outErr}
	if res.requests < 0 {
		res.requests = int(taken.Load())
	}
	if unfinished := res.requests - res.succeeded - failures.count(); unfinished > 0 {
		reason := reasonCancelled
		if r.src.err() != nil && !stopped() {
			reason = reasonUnread
		}
		failures.add(reason, unfinished)
	}
	res.cancelled = stopped()
	return res
}

// do sends one request and reports whether it succeeded (a 2xx final response), or why not; err is
// the output's error when its record could not be written. A request the run's context cancelled
// gets no record: it did not end, and -resume sends it again.
func (r *runner) do(ctx context.Context, it item) (reason string, ok bool, err error) {
	rec := &record{Line: it.seq, ID: it.id, Method: it.spec.method, URL: it.spec.url}
	if it.err != nil {
		if r.onBadLine != nil {
			r.onBadLine(it)
		}
		rec.Error = fmt.Sprintf("line %d: %v", it.seq, it.err)
		return reasonBadLine, false, r.record(rec)
	}
	rctx := withTrack(ctx)
	if r.timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, r.timeout)
		defer cancel()
	}
	start := time.Now()
	reason, ok = r.send(ctx, rctx, it, rec)
	if reason == reasonCancelled {
		return reason, false, nil
	}
	rec.Attempts = int(trackOf(rctx).attempts.Load())
	rec.ElapsedS = round(time.Since(start).Seconds(), 6)
	rec.Done = ok
	if !ok {
		rec.Error = reason
	}
	return reason, ok, r.record(rec)
}

// record writes rec to the output, if there is one.
func (r *runner) record(rec *record) error {
	if r.out == nil {
		return nil
	}
	return r.out.write(rec)
}

// send sends the request of it with rctx and fills in rec's response fields.
func (r *runner) send(runCtx, rctx context.Context, it item, rec *record) (reason string, ok bool) {
	req, err := it.spec.newRequest(rctx)
	if err != nil {
		return "building the request: " + err.Error(), false
	}
	if r.out != nil && needsKey(req.Method) && !retry.HasIdempotencyKey(req.Header) {
		// The same request of the same job carries the same key in every run, so a server that
		// honours it applies a POST sent again by -resume (after a crash lost its answer) once.
		req.Header.Set(retry.HeaderIdempotencyKey, r.out.job+"-"+it.id)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return failureReason(runCtx, err, r.timeout), false
	}
	rec.Status = resp.StatusCode
	if r.headers {
		rec.Headers = resp.Header.Clone()
	}
	rerr := r.readBody(resp.Body, rec)
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "status " + resp.Status, false
	}
	if rerr != nil {
		return "reading the response: " + failureReason(runCtx, rerr, r.timeout), false
	}
	return "", true
}

// needsKey reports whether a method gets an Idempotency-Key derived from its request: the methods
// that are not idempotent and that a batch sends, POST and PATCH.
func needsKey(method string) bool { return method == http.MethodPost || method == http.MethodPatch }

// readBody reads a response body as the output asks: digested whole, kept (up to maxBodyRead), or
// read (up to maxBodyRead) and dropped.
func (r *runner) readBody(body io.Reader, rec *record) error {
	switch {
	case r.out != nil && r.body == bodyDigest:
		h := sha256.New()
		n, err := io.Copy(h, body)
		rec.BodyBytes, rec.BodySHA256 = &n, hexSum(h)
		return err
	case r.out != nil && r.body == bodyFull:
		b, err := io.ReadAll(io.LimitReader(body, maxBodyRead+1))
		if len(b) > maxBodyRead {
			b, rec.BodyTruncated = b[:maxBodyRead], true
		}
		if utf8.Valid(b) {
			s := string(b)
			rec.Body = &s
		} else {
			rec.BodyBase64 = base64.StdEncoding.EncodeToString(b)
		}
		return err
	}
	_, err := io.Copy(io.Discard, io.LimitReader(body, maxBodyRead))
	return err
}

// hexSum is h's sum in hex.
func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

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
