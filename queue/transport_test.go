package queue

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor polls cond until it holds. It asserts nothing about time; the test's own timeout bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		runtime.Gosched()
		time.Sleep(20 * time.Microsecond)
	}
}

// closeRecorder is a request body that records whether it was closed.
type closeRecorder struct {
	io.Reader
	closed atomic.Int32
}

func newCloseRecorder(s string) *closeRecorder { return &closeRecorder{Reader: strings.NewReader(s)} }

func (c *closeRecorder) Close() error {
	c.closed.Add(1)
	return nil
}

// roundTripFunc is an in-memory RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// okResponse returns an in-memory 200 response with the given body.
func okResponse(req *http.Request, body io.ReadCloser) *http.Response {
	return &http.Response{StatusCode: http.StatusOK, Body: body, Request: req, Header: http.Header{}}
}

// TestTransportServesInArrivalOrder sends 1,000 concurrent requests through a one-place queue to a
// loopback server. Each request is started only after the previous one is observed waiting, so the
// arrival order is known; the server must see the requests in exactly that order, one at a time.
func TestTransportServesInArrivalOrder(t *testing.T) {
	const n = 1000
	var mu sync.Mutex
	var seen []int
	var active, maxActive int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		active++
		maxActive = max(maxActive, active)
		seq, err := strconv.Atoi(r.Header.Get("X-Seq"))
		if err != nil {
			seq = -1
		}
		seen = append(seen, seq)
		active--
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()

	q := mustNew(t, WithMaxInFlight(1))
	client := &http.Client{Transport: NewTransport(srv.Client().Transport, q)}
	defer client.CloseIdleConnections()

	hold, err := q.Acquire(context.Background())
	require.NoError(t, err)
	var wg sync.WaitGroup
	var failures atomic.Int32
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			if err != nil {
				failures.Add(1)
				return
			}
			req.Header.Set("X-Seq", strconv.Itoa(i))
			resp, err := client.Do(req)
			if err != nil {
				failures.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failures.Add(1)
			}
		})
		waitFor(func() bool { return q.Stats().Waiting == i+1 })
	}
	hold()
	wg.Wait()

	require.Zero(t, failures.Load())
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, seen)
	assert.Equal(t, 1, maxActive)
	assert.Equal(t, Stats{Admitted: n + 1}, q.Stats())
}

// TestTransportRefusal checks every way the queue refuses a request: the error is matchable, the
// request body is closed, and the next RoundTripper is never called.
func TestTransportRefusal(t *testing.T) {
	full := func(t *testing.T) *Queue {
		q := mustNew(t, WithMaxInFlight(1), WithMaxWaiting(0))
		_, err := q.Acquire(context.Background()) // held for the rest of the test
		require.NoError(t, err)
		return q
	}
	closed := func(t *testing.T) *Queue {
		q := mustNew(t)
		require.NoError(t, q.Close())
		return q
	}
	open := func(t *testing.T) *Queue { return mustNew(t) }
	none := func(*testing.T) *Queue { return nil }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name  string
		queue func(*testing.T) *Queue
		ctx   context.Context
		want  error
	}{
		{name: "line full", queue: full, ctx: context.Background(), want: ErrQueueFull},
		{name: "line full, high priority", queue: full, ctx: WithPriority(context.Background(), High), want: ErrQueueFull},
		{name: "closed", queue: closed, ctx: context.Background(), want: ErrClosed},
		{name: "context already cancelled", queue: open, ctx: cancelled, want: context.Canceled},
		{name: "invalid priority", queue: open, ctx: WithPriority(context.Background(), 9), want: ErrInvalidPriority},
		{name: "no queue", queue: none, ctx: context.Background(), want: ErrNilQueue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls.Add(1)
				return okResponse(r, http.NoBody), nil
			})
			rt := NewTransport(next, tt.queue(t))
			body := newCloseRecorder("payload")
			req, err := http.NewRequestWithContext(tt.ctx, http.MethodPost, "http://example.invalid/", body)
			require.NoError(t, err)

			resp, err := rt.RoundTrip(req)
			assert.Nil(t, resp)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, int32(1), body.closed.Load(), "request body closed")
			assert.Zero(t, calls.Load(), "next RoundTripper called")
		})
	}
}

// TestTransportQueueFullThroughClient checks ErrQueueFull through an http.Client against a loopback
// server: the error is matchable through the client's *url.Error and the body is closed.
func TestTransportQueueFullThroughClient(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	q := mustNew(t, WithMaxInFlight(1), WithMaxWaiting(0))
	client := &http.Client{Transport: NewTransport(srv.Client().Transport, q)}
	defer client.CloseIdleConnections()

	hold, err := q.Acquire(context.Background())
	require.NoError(t, err)
	body := newCloseRecorder("data")
	req, err := http.NewRequest(http.MethodPost, srv.URL, body)
	require.NoError(t, err)
	resp, err := client.Do(req)
	if resp != nil {
		_ = resp.Body.Close()
	}
	assert.ErrorIs(t, err, ErrQueueFull)
	assert.Equal(t, int32(1), body.closed.Load())
	assert.Zero(t, hits.Load())
	hold()

	resp, err = client.Get(srv.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, int32(1), hits.Load())
	assert.Equal(t, Stats{Admitted: 2, Refused: 1}, q.Stats())
}

// TestTransportCancelWhileWaiting cancels a request waiting in line: it returns with the context's
// error, its body closed, and the server never sees it; the place is not lost.
func TestTransportCancelWhileWaiting(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	q := mustNew(t, WithMaxInFlight(1))
	client := &http.Client{Transport: NewTransport(srv.Client().Transport, q)}
	defer client.CloseIdleConnections()

	hold, err := q.Acquire(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	body := newCloseRecorder("data")
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL, body)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	waitFor(func() bool { return q.Stats().Waiting == 1 })
	cancel()
	err = <-done
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int32(1), body.closed.Load())
	assert.Equal(t, Stats{InFlight: 1, Admitted: 1, Cancelled: 1}, q.Stats())

	hold()
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, int32(1), hits.Load())
	assert.Equal(t, Stats{Admitted: 2, Cancelled: 1}, q.Stats())
}

// abcResponse answers in memory with a 200 response whose body is "abc".
func abcResponse(r *http.Request) (*http.Response, error) {
	return okResponse(r, io.NopCloser(strings.NewReader("abc"))), nil
}

// TestTransportRelease checks when a request stops being in flight.
func TestTransportRelease(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name string
		// next returns the response (or error) of the next RoundTripper.
		next func(*http.Request) (*http.Response, error)
		// consume does something with the response; inFlight is the expected InFlight after it.
		consume  func(t *testing.T, resp *http.Response)
		inFlight int
		wantErr  error
	}{
		{
			name:     "body not yet read",
			next:     abcResponse,
			consume:  func(*testing.T, *http.Response) {},
			inFlight: 1,
		},
		{
			name: "body partly read",
			next: abcResponse,
			consume: func(t *testing.T, resp *http.Response) {
				_, err := resp.Body.Read(make([]byte, 1))
				require.NoError(t, err)
			},
			inFlight: 1,
		},
		{
			name: "body read to EOF without Close",
			next: abcResponse,
			consume: func(t *testing.T, resp *http.Response) {
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, "abc", string(b))
			},
		},
		{
			name: "body closed unread",
			next: abcResponse,
			consume: func(t *testing.T, resp *http.Response) {
				require.NoError(t, resp.Body.Close())
			},
		},
		{
			name: "read to EOF and closed twice",
			next: abcResponse,
			consume: func(t *testing.T, resp *http.Response) {
				_, _ = io.ReadAll(resp.Body)
				require.NoError(t, resp.Body.Close())
				require.NoError(t, resp.Body.Close())
			},
		},
		{
			name:    "no body",
			next:    func(r *http.Request) (*http.Response, error) { return okResponse(r, http.NoBody), nil },
			consume: func(*testing.T, *http.Response) {},
		},
		{
			name:    "nil body",
			next:    func(r *http.Request) (*http.Response, error) { return okResponse(r, nil), nil },
			consume: func(*testing.T, *http.Response) {},
		},
		{
			name:    "transport error",
			next:    func(*http.Request) (*http.Response, error) { return nil, errBoom },
			wantErr: errBoom,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := mustNew(t, WithMaxInFlight(1))
			resp, err := NewTransport(roundTripFunc(tt.next), q).RoundTrip(httptest.NewRequest(http.MethodGet, "/", nil))
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, resp)
			} else {
				require.NoError(t, err)
				tt.consume(t, resp)
			}
			assert.Equal(t, Stats{InFlight: tt.inFlight, Admitted: 1}, q.Stats())
		})
	}
}

// rwBody is a response body that is also writable, like the body of a 101 Switching Protocols response.
type rwBody struct {
	io.Reader
	written bytes.Buffer
	closed  bool
}

func (b *rwBody) Write(p []byte) (int, error) { return b.written.Write(p) }
func (b *rwBody) Close() error                { b.closed = true; return nil }

func TestTransportKeepsWritableBody(t *testing.T) {
	q := mustNew(t)
	under := &rwBody{Reader: strings.NewReader("")}
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp := okResponse(r, under)
		resp.StatusCode = http.StatusSwitchingProtocols
		return resp, nil
	})
	resp, err := NewTransport(next, q).RoundTrip(httptest.NewRequest(http.MethodGet, "/", nil))
	require.NoError(t, err)
	rw, ok := resp.Body.(io.ReadWriteCloser)
	require.True(t, ok, "body lost its Write method")
	_, err = rw.Write([]byte("hello"))
	require.NoError(t, err)
	assert.Equal(t, "hello", under.written.String())
	assert.Equal(t, 1, q.Stats().InFlight)
	require.NoError(t, rw.Close())
	assert.True(t, under.closed)
	assert.Equal(t, 0, q.Stats().InFlight)
}

// TestTransportDoesNotModifyRequest checks that the caller's request reaches the next RoundTripper as
// the same value, with its fields unchanged.
func TestTransportDoesNotModifyRequest(t *testing.T) {
	q := mustNew(t)
	req := httptest.NewRequest(http.MethodPost, "http://api.example/v1/items?x=1", strings.NewReader("body"))
	req.Header.Set("Authorization", "Bearer t")
	before := req.Clone(req.Context())
	var got *http.Request
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		return okResponse(r, http.NoBody), nil
	})
	_, err := NewTransport(next, q).RoundTrip(req)
	require.NoError(t, err)
	assert.Same(t, req, got)
	assert.Equal(t, before.Method, req.Method)
	assert.Equal(t, before.URL.String(), req.URL.String())
	assert.Equal(t, before.Header, req.Header)
	assert.Equal(t, before.Context(), req.Context())
}

func TestTransportNilInputs(t *testing.T) {
	q := mustNew(t)
	_, err := NewTransport(nil, q).RoundTrip(nil)
	assert.ErrorIs(t, err, ErrNilRequest)
	var nilT *Transport
	_, err = nilT.RoundTrip(httptest.NewRequest(http.MethodGet, "/", nil))
	assert.ErrorIs(t, err, ErrNilQueue)
	nilT.CloseIdleConnections()
	assert.Equal(t, http.DefaultTransport, NewTransport(nil, q).next)
	assert.Equal(t, Stats{}, q.Stats())
}

type idleCloser struct {
	http.RoundTripper
	calls int
}

func (c *idleCloser) CloseIdleConnections() { c.calls++ }

func TestTransportCloseIdleConnections(t *testing.T) {
	next := &idleCloser{}
	tr := NewTransport(next, mustNew(t))
	(&http.Client{Transport: tr}).CloseIdleConnections()
	assert.Equal(t, 1, next.calls)
	NewTransport(roundTripFunc(nil), mustNew(t)).CloseIdleConnections() // next without the method: no-op
}
