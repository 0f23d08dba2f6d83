package queue

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Transport is an http.RoundTripper that takes a place in a Queue before passing a request to the
// next RoundTripper. A request is in flight from the moment it is admitted until its response body
// has been read to EOF or closed (or at once when the next RoundTripper returns an error or a
// response without a body), so callers must close response bodies, as net/http requires, or the
// place is never given back.
//
// The request's priority comes from its context (see WithPriority). When the queue refuses a
// request (ErrQueueFull, ErrClosed, the context's error, ErrInvalidPriority), RoundTrip closes the
// request body and returns the error without calling the next RoundTripper. The request is never
// modified.
//
// Create a Transport with NewTransport. It is safe for concurrent use. Admission without contention
// costs no goroutine and one allocation (the response body wrapper).
type Transport struct {
	next http.RoundTripper
	q    *Queue
}

// NewTransport returns a Transport that admits requests through q and passes them to next. A nil next
// means http.DefaultTransport. A nil q makes every RoundTrip fail with ErrNilQueue.
func NewTransport(next http.RoundTripper, q *Queue) *Transport {
	if next == nil {
		next = http.DefaultTransport
	}
	return &Transport{next: next, q: q}
}

// RoundTrip waits for a place in the queue, then sends req through the next RoundTripper. See
// Transport for when the place is given back.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t == nil || t.q == nil {
		closeRequestBody(req)
		return nil, ErrNilQueue
	}
	if req == nil {
		return nil, ErrNilRequest
	}
	if t.q.onWait == nil {
		if err := t.q.acquire(req.Context()); err != nil {
			closeRequestBody(req)
			return nil, err
		}
	} else {
		start := time.Now()
		waited, err := t.q.acquireWaited(req.Context())
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		if waited {
			t.q.onWait(req, time.Since(start))
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		t.q.release()
		return resp, err
	}
	if rw, ok := resp.Body.(io.ReadWriteCloser); ok {
		// Keep the body writable (a 101 Switching Protocols connection); it stays in flight until closed.
		resp.Body = &readWriteBody{body: body{rc: rw, q: t.q}, w: rw}
	} else {
		resp.Body = &body{rc: resp.Body, q: t.q}
	}
	return resp, nil
}

// CloseIdleConnections closes the idle connections of the next RoundTripper, if it has that method
// (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	if t == nil {
		return
	}
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// closeRequestBody closes req's body, as a RoundTripper must even when it does not send req.
func closeRequestBody(req *http.Request) {
	if req != nil && req.Body != nil {
		_ = req.Body.Close()
	}
}

// body wraps a response body and gives the request's place back when it is read to EOF or closed.
type body struct {
	rc   io.ReadCloser
	q    *Queue
	done atomic.Bool
}

// Read reads from the response body; at io.EOF the place is given back.
func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish()
	}
	return n, err
}

// Close closes the response body and gives the place back (once).
func (b *body) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *body) finish() {
	if b.done.CompareAndSwap(false, true) {
		b.q.release()
	}
}

// readWriteBody is a body whose underlying connection is also writable.
type readWriteBody struct {
	body
	w io.Writer
}

// Write writes to the underlying connection.
func (b *readWriteBody) Write(p []byte) (int, error) { return b.w.Write(p) }
