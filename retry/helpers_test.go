package retry_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

// step is what the scripted server does with one arriving request.
type step struct {
	status int
	header http.Header // set on the response
	hijack bool        // close the connection without answering
}

func status(code int, kv ...string) step {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return step{status: code, header: h}
}

var hangUp = step{hijack: true}

// arrival is what the scripted server saw of one request.
type arrival struct {
	method string
	body   []byte
	key    string // Idempotency-Key header
	at     time.Time
}

// script answers the n-th arriving request with steps[n], repeating the last step, and records
// every arrival. It is safe for concurrent use.
type script struct {
	steps []step
	mu    sync.Mutex
	seen  []arrival
	conns atomic.Int32 // connections opened by clients
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.seen)
	s.seen = append(s.seen, arrival{method: r.Method, body: body, key: r.Header.Get("Idempotency-Key"), at: time.Now()})
	s.mu.Unlock()
	st := s.steps[min(n, len(s.steps)-1)]
	if st.hijack {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	for k, v := range st.header {
		w.Header()[k] = v
	}
	w.WriteHeader(st.status)
	fmt.Fprintf(w, "answer %d", n+1)
}

func (s *script) arrivals() []arrival {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]arrival(nil), s.seen...)
}

func (s *script) connState(_ net.Conn, st http.ConnState) {
	if st == http.StateNew {
		s.conns.Add(1)
	}
}

// serve starts a loopback server playing steps; it is closed when the test ends.
func serve(t *testing.T, steps ...step) (*httptest.Server, *script) {
	t.Helper()
	s := &script{steps: steps}
	srv := httptest.NewUnstartedServer(s)
	srv.Config.ConnState = s.connState
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, s
}

// fast are options that keep real waits of tests without Retry-After negligible.
var fast = []retry.Option{retry.WithBaseDelay(time.Microsecond), retry.WithMaxDelay(50 * time.Microsecond)}

func newTransport(t *testing.T, next http.RoundTripper, opts ...retry.Option) *retry.Transport {
	t.Helper()
	tr, err := retry.NewTransport(next, append(append([]retry.Option(nil), fast...), opts...)...)
	require.NoError(t, err)
	return tr
}

// events is an Observer that records what it is told, without the random waits.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, fmt.Sprintf(format, args...))
}

func (e *events) Attempt(req *http.Request, attempt int) { e.add("attempt %d", attempt) }
func (e *events) Retry(req *http.Request, attempt int, reason retry.Reason, wait time.Duration) {
	e.add("retry %d after %s", attempt, kind(reason))
}
func (e *events) GaveUp(req *http.Request, attempts int, reason retry.Reason, cause error) {
	e.add("gave up after %d: %s: %v", attempts, kind(reason), cause)
}

func (e *events) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.log...)
}

func kind(r retry.Reason) string {
	if r.Err != nil {
		return "error"
	}
	return fmt.Sprint(r.Status)
}

// trackedBody is a request body that records whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
	once   sync.Once
	done   chan struct{}
}

func newTrackedBody(r io.Reader) *trackedBody {
	return &trackedBody{Reader: r, done: make(chan struct{})}
}

func (b *trackedBody) Close() error {
	b.closed.Store(true)
	b.once.Do(func() { close(b.done) })
	return nil
}

// waitClosed reports whether the body is closed, waiting for it a while: net/http may close a
// request body on its own goroutine after RoundTrip returned. The wait only bounds a failure.
func (b *trackedBody) waitClosed() bool {
	select {
	case <-b.done:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// trackedRequest builds a request whose body and every GetBody body are tracked.
func trackedRequest(t *testing.T, method, url string, payload []byte) (*http.Request, func() []*trackedBody) {
	t.Helper()
	var mu sync.Mutex
	var bodies []*trackedBody
	newBody := func() *trackedBody {
		b := newTrackedBody(bytes.NewReader(payload))
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		return b
	}
	req, err := http.NewRequest(method, url, newBody())
	require.NoError(t, err)
	req.ContentLength = int64(len(payload))
	req.GetBody = func() (io.ReadCloser, error) { return newBody(), nil }
	return req, func() []*trackedBody {
		mu.Lock()
		defer mu.Unlock()
		return append([]*trackedBody(nil), bodies...)
	}
}
