package client

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/throttle/learn"
)

// scripted answers the n-th attempt it sees with statuses[n] (the last one repeated) and a
// Retry-After of one second on a 429; it records each attempt's context.
type scripted struct {
	mu       sync.Mutex
	statuses []int
	ctxs     []context.Context
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	i := min(len(s.ctxs), len(s.statuses)-1)
	s.ctxs = append(s.ctxs, req.Context())
	s.mu.Unlock()
	if req.Body != nil {
		req.Body.Close()
	}
	h := http.Header{}
	if s.statuses[i] == http.StatusTooManyRequests {
		h.Set("Retry-After", "1")
	}
	return &http.Response{StatusCode: s.statuses[i], Header: h, Body: http.NoBody, Request: req}, nil
}

type attemptMark struct{}

// attemptRecorder is an AttemptObserver that marks each attempt's context with its number and
// records what it is told.
type attemptRecorder struct {
	NopObserver
	mu        sync.Mutex
	started   []AttemptInfo
	ended     []AttemptResult
	endMarks  []int
	throttled []int // the attempt mark found in the Throttled request's context
}

func (r *attemptRecorder) AttemptStarted(ctx context.Context, a AttemptInfo) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, a)
	return context.WithValue(ctx, attemptMark{}, a.Number)
}

func (r *attemptRecorder) AttemptEnded(ctx context.Context, a AttemptResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, a)
	n, _ := ctx.Value(attemptMark{}).(int)
	r.endMarks = append(r.endMarks, n)
}

func (r *attemptRecorder) Throttled(req *http.Request, _ string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, _ := req.Context().Value(attemptMark{}).(int)
	r.throttled = append(r.throttled, n)
}

// TestAttemptObserver: each attempt is started and ended once, numbered from 1 per request, with
// the key, its outcome and the context its start returned; that context reaches the base and the
// throttle's event, and the caller's request is not modified.
func TestAttemptObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &scripted{statuses: []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusOK}}
		rec := &attemptRecorder{}
		c := New(WithBase(base), WithoutPace(), WithObserver(rec), WithMaxWait(0),
			WithKeyFunc(func(*http.Request) string { return "k" }))
		c.Transport.(*Transport).Throttle().Pause("k", time.Now().Add(time.Minute))
		req, err := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
		require.NoError(t, err)
		ctx0 := req.Context()
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, ctx0, req.Context(), "the caller's request keeps its context")

		require.Len(t, rec.started, 3)
		require.Len(t, rec.ended, 3)
		for i, a := range rec.started {
			assert.Equal(t, i+1, a.Number)
			assert.Equal(t, "k", a.Key)
			assert.Equal(t, i+1, rec.ended[i].Number)
			assert.Equal(t, i+1, rec.endMarks[i], "AttemptEnded gets the context AttemptStarted returned")
			assert.Equal(t, i+1, base.ctxs[i].Value(attemptMark{}), "the base sees the attempt's context")
		}
		assert.Equal(t, []int{429, 503, 200}, []int{
			rec.ended[0].Response.StatusCode, rec.ended[1].Response.StatusCode, rec.ended[2].Response.StatusCode})
		assert.GreaterOrEqual(t, rec.ended[1].Elapsed, time.Duration(0))
		// The key was paused: attempt 1 waited in the throttle, under its own context (later
		// attempts went after the 429's Retry-After had passed).
		assert.Equal(t, []int{1}, rec.throttled)
		assert.GreaterOrEqual(t, rec.ended[0].Elapsed, time.Minute, "the attempt's time includes its throttle wait")

		// A second request counts from 1 again; request.WithKey is its key.
		rec.started, rec.ended = nil, nil
		req2, err := http.NewRequestWithContext(request.WithKey(context.Background(), "mine"), http.MethodGet, "http://api.test/y", nil)
		require.NoError(t, err)
		resp, err = c.Do(req2)
		require.NoError(t, err)
		resp.Body.Close()
		require.Len(t, rec.started, 1)
		assert.Equal(t, 1, rec.started[0].Number)
		assert.Equal(t, "mine", rec.started[0].Key)
	})
}

// TestAttemptObserverRefused: an attempt refused below the retry layer (here the throttle's
// maximum wait) ends with the refusal as its error.
func TestAttemptObserverRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &attemptRecorder{}
		c := New(WithBase(&scripted{statuses: []int{200}}), WithoutPace(), WithObserver(rec))
		tr := c.Transport.(*Transport)
		tr.Throttle().Pause("api.test", time.Now().Add(time.Hour))
		ctx := request.WithMaxWait(context.Background(), time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
		require.NoError(t, err)
		_, err = c.Do(req)
		require.Error(t, err)
		require.Len(t, rec.ended, 1)
		assert.Nil(t, rec.ended[0].Response)
		assert.Error(t, rec.ended[0].Err)
	})
}

// TestPlainObserverNoAttemptLayer: an Observer that is not an AttemptObserver adds no attempt
// layer (and no copy of the request).
func TestPlainObserverNoAttemptLayer(t *testing.T) {
	tr := NewTransport(&scripted{statuses: []int{200}}, WithObserver(&counter{}))
	require.NoError(t, tr.Err())
	assert.False(t, tr.countAttempts)
	tr = NewTransport(&scripted{statuses: []int{200}}, WithObserver(&attemptRecorder{}))
	assert.True(t, tr.countAttempts)
}

// logRecords is a slog.Handler that keeps every record's message and attributes.
type logRecords struct {
	mu    sync.Mutex
	lines []string
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	h.mu.Lock()
	h.lines = append(h.lines, b.String())
	h.mu.Unlock()
	return nil
}

// learnerLines returns the lines that carry a learner's strategy attribute.
func (h *logRecords) learnerLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, l := range h.lines {
		if strings.Contains(l, " strategy=") {
			out = append(out, l)
		}
	}
	return out
}

// TestLoggerReachesLearner: WithLogger's logger gets the learner's transitions at Debug, whichever
// option comes first; a learn.WithLogger of WithLearner's own takes precedence.
func TestLoggerReachesLearner(t *testing.T) {
	run := func(t *testing.T, opts ...Option) {
		t.Helper()
		base := &scripted{statuses: []int{http.StatusTooManyRequests, http.StatusOK}}
		c := New(append([]Option{WithBase(base)}, opts...)...)
		resp, err := c.Get("http://api.test/x")
		require.NoError(t, err)
		resp.Body.Close()
	}
	synctest.Test(t, func(t *testing.T) {
		for _, first := range []bool{true, false} {
			h := &logRecords{}
			l := slog.New(h)
			if first {
				run(t, WithLogger(l), WithLearner())
			} else {
				run(t, WithLearner(), WithLogger(l))
			}
			lines := h.learnerLines()
			require.NotEmpty(t, lines, "the learner's transitions reach WithLogger's logger")
			assert.True(t, strings.HasPrefix(lines[0], "api.test: "), "lines name the key: %q", lines[0])
		}

		stack, own := &logRecords{}, &logRecords{}
		run(t, WithLogger(slog.New(stack)), WithLearner(learn.WithLogger(slog.New(own))))
		assert.Empty(t, stack.learnerLines())
		assert.NotEmpty(t, own.learnerLines())
	})
}
