package testserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingApp answers each request with a body naming how many requests it has executed, so that
// a replay is told from a second execution by its body.
type countingApp struct {
	n      atomic.Int64
	status int
}

func (a *countingApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := a.n.Add(1)
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Execution", strconv.FormatInt(n, 10))
	if a.status != 0 {
		w.WriteHeader(a.status)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
	_, _ = io.WriteString(w, "execution "+strconv.FormatInt(n, 10)+" of "+string(body))
}

// serveKeyed sends one request through h and returns the recorded answer.
func serveKeyed(h http.Handler, method, target, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if key != "" {
		r.Header.Set(HeaderIdempotencyKey, key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func newIdempotency(t *testing.T, maxKeys int) *Idempotency {
	t.Helper()
	i, err := NewIdempotency(maxKeys)
	require.NoError(t, err)
	return i
}

func TestIdempotencyReplaysTheFirstAnswer(t *testing.T) {
	app := &countingApp{}
	idem := newIdempotency(t, 0)
	h := idem.Middleware(app)

	first := serveKeyed(h, "POST", "/items", "k1", `{"a":1}`)
	assert.Equal(t, http.StatusCreated, first.Code)
	assert.Equal(t, `execution 1 of {"a":1}`, first.Body.String())
	assert.Empty(t, first.Header().Get(HeaderIdempotentReplayed))

	for range 3 {
		again := serveKeyed(h, "POST", "/items", "k1", `{"a":1}`)
		assert.Equal(t, http.StatusCreated, again.Code)
		assert.Equal(t, first.Body.String(), again.Body.String(), "the first answer, not a new execution")
		assert.Equal(t, "1", again.Header().Get("X-Execution"))
		assert.Equal(t, "true", again.Header().Get(HeaderIdempotentReplayed))
	}
	other := serveKeyed(h, "POST", "/items", "k2", `{"a":1}`)
	assert.Equal(t, `execution 2 of {"a":1}`, other.Body.String(), "another key is executed")

	plain := serveKeyed(h, "POST", "/items", "", `{"a":1}`)
	assert.Equal(t, `execution 3 of {"a":1}`, plain.Body.String(), "no key: passed through")
	serveKeyed(h, "POST", "/items", "", `{"a":1}`)
	assert.Equal(t, int64(4), app.n.Load())

	assert.Equal(t, IdempotencyStats{Executed: 2, Replayed: 3, Keys: 2}, idem.Stats())
}

func TestIdempotencyRefusesAKeyReusedForAnotherRequest(t *testing.T) {
	tests := []struct {
		name, method, target, body string
	}{
		{"another body", "POST", "/items", `{"a":2}`},
		{"another path", "POST", "/other", `{"a":1}`},
		{"another query", "POST", "/items?x=1", `{"a":1}`},
		{"another method", "PUT", "/items", `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &countingApp{}
			idem := newIdempotency(t, 0)
			h := idem.Middleware(app)
			serveKeyed(h, "POST", "/items", "k", `{"a":1}`)
			w := serveKeyed(h, tt.method, tt.target, "k", tt.body)
			assert.Equal(t, http.StatusUnprocessableEntity, w.Code)
			assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
			assert.Equal(t, int64(1), app.n.Load())
			assert.Equal(t, int64(1), idem.Stats().Mismatches)
		})
	}
}

func TestIdempotencyConflictWhileInProgress(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
		w.WriteHeader(http.StatusCreated)
	})
	idem := newIdempotency(t, 0)
	h := idem.Middleware(app)
	var wg sync.WaitGroup
	var first *httptest.ResponseRecorder
	wg.Go(func() { first = serveKeyed(h, "POST", "/items", "k", "x") })
	<-entered
	w := serveKeyed(h, "POST", "/items", "k", "x")
	assert.Equal(t, http.StatusConflict, w.Code)
	close(release)
	wg.Wait()
	assert.Equal(t, http.StatusCreated, first.Code)
	assert.Equal(t, http.StatusCreated, serveKeyed(h, "POST", "/items", "k", "x").Code)
	assert.Equal(t, int64(1), calls.Load())
	assert.Equal(t, IdempotencyStats{Executed: 1, Replayed: 1, Conflicts: 1, Keys: 1}, idem.Stats())
}

func TestIdempotencyForgetsAnswersNotKept(t *testing.T) {
	t.Run("a 5xx answer", func(t *testing.T) {
		app := &countingApp{status: http.StatusServiceUnavailable}
		h := newIdempotency(t, 0).Middleware(app)
		serveKeyed(h, "POST", "/", "k", "")
		serveKeyed(h, "POST", "/", "k", "")
		assert.Equal(t, int64(2), app.n.Load(), "a server error is executed again")
	})
	t.Run("a client gone by the answer", func(t *testing.T) {
		// The handler did its work: the answer is kept for the client's next try.
		app := &countingApp{}
		h := newIdempotency(t, 0).Middleware(app)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := httptest.NewRequestWithContext(ctx, "POST", "/", nil)
		r.Header.Set(HeaderIdempotencyKey, "k")
		h.ServeHTTP(httptest.NewRecorder(), r)
		w := serveKeyed(h, "POST", "/", "k", "")
		assert.Equal(t, int64(1), app.n.Load())
		assert.Equal(t, "true", w.Header().Get(HeaderIdempotentReplayed))
	})
	t.Run("an answer above the bound", func(t *testing.T) {
		var calls atomic.Int64
		big := strings.Repeat("x", maxIdempotentBody+1)
		h := newIdempotency(t, 0).Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			calls.Add(1)
			_, _ = io.WriteString(w, big)
		}))
		w := serveKeyed(h, "POST", "/", "k", "")
		assert.Equal(t, len(big), w.Body.Len(), "passed on whole")
		serveKeyed(h, "POST", "/", "k", "")
		assert.Equal(t, int64(2), calls.Load())
	})
}

func TestIdempotencyBounds(t *testing.T) {
	app := &countingApp{}
	idem := newIdempotency(t, 2)
	h := idem.Middleware(app)
	for _, k := range []string{"a", "b", "c"} {
		serveKeyed(h, "POST", "/", k, "")
	}
	assert.Equal(t, 2, idem.Stats().Keys)
	assert.Equal(t, "true", serveKeyed(h, "POST", "/", "c", "").Header().Get(HeaderIdempotentReplayed))
	assert.Empty(t, serveKeyed(h, "POST", "/", "a", "").Header().Get(HeaderIdempotentReplayed), "the oldest key was forgotten")
	assert.Equal(t, int64(4), app.n.Load())

	w := serveKeyed(h, "POST", "/", "big", strings.Repeat("x", maxIdempotentBody+1))
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	assert.Equal(t, int64(4), app.n.Load())

	_, err := NewIdempotency(-1)
	assert.True(t, errors.Is(err, ErrInvalidOption), "%v", err)
	_, err = New(WithIdempotency(-1))
	assert.True(t, errors.Is(err, ErrInvalidOption), "%v", err)
	_, err = NewLimiter(nil, WithIdempotency(0))
	assert.True(t, errors.Is(err, ErrServerOption), "%v", err)
}

// TestServerWithIdempotency: a Server with WithIdempotency executes each key once and replays it,
// while its limiter and its own counters still see every request.
func TestServerWithIdempotency(t *testing.T) {
	srv := NewT(t, WithIdempotency(0), WithResponse(Response{Status: http.StatusCreated, Body: "made\n"}))
	post := func(key string) *http.Response {
		req, err := http.NewRequest("POST", srv.URL()+"/items", strings.NewReader("{}"))
		require.NoError(t, err)
		req.Header.Set(HeaderIdempotencyKey, key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, "made\n", string(b))
		return resp
	}
	assert.Empty(t, post("a").Header.Get(HeaderIdempotentReplayed))
	assert.Equal(t, "true", post("a").Header.Get(HeaderIdempotentReplayed))
	post("b")
	st := srv.Stats().Server
	require.NotNil(t, st.Idempotency)
	assert.Equal(t, IdempotencyStats{Executed: 2, Replayed: 1, Keys: 2}, *st.Idempotency)
	assert.Equal(t, int64(3), st.Requests)

	plain := NewT(t)
	assert.Nil(t, plain.Stats().Server.Idempotency, "off by default")
}
