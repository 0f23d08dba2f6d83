package testserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveAt answers one request through l's middleware; between the decision and the answer (in the
// request hook) the clock moves by lag, as a store's round trip or a wait for the key's lock does.
func serveAt(t *testing.T, l *Limiter, clock *fakeClock, lag *time.Duration) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})).ServeHTTP(w, req(http.MethodGet, "/x", "192.0.2.1:1000"))
	*lag = 0
	return w
}

// TestAnswerMeasuresFromItsOwnInstant checks that the waits a response names are measured from the
// moment it is written, not from the clock read the decision was made at: a caller that read the
// clock before another caller's decision was committed (a late caller), or whose decision waited
// on the store, would otherwise be told a reset beyond the window. Whole-second headers round that
// up to a second more (a 1 s sliding log answering "reset 2"), which a client rightly reads as a
// window counter's reset, a different limiter.
func TestAnswerMeasuresFromItsOwnInstant(t *testing.T) {
	var lag time.Duration
	hook := func(clock *fakeClock) Option {
		return WithRequestHook(func(time.Time, *http.Request, Result) { clock.Advance(lag) })
	}

	t.Run("late caller of a sliding log", func(t *testing.T) {
		clock := newFakeClock()
		l := mustLimiter([]Rule{{Name: "api", Algorithm: "sliding-log", Limit: 200, Window: time.Second}},
			WithClock(clock.Now), hook(clock))
		w := serveAt(t, l, clock, &lag)
		require.Equal(t, http.StatusOK, w.Code)
		// The next caller read the clock 10 ms before the first one's and is decided after it,
		// at the first one's time; its answer leaves 1 ms after that.
		clock.Advance(-10 * time.Millisecond)
		lag = 11 * time.Millisecond
		w = serveAt(t, l, clock, &lag)
		require.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "1", w.Header().Get("X-RateLimit-Reset"), "the window is 1 s; its end is at most 1 s away")
		assert.Equal(t, `"api";r=198;t=1`, w.Header().Get("RateLimit"))
	})

	t.Run("a denial decided slowly", func(t *testing.T) {
		clock := newFakeClock()
		l := mustLimiter([]Rule{{Name: "api", Algorithm: "token-bucket", Limit: 2, Window: 3 * time.Second, Burst: 1}},
			WithClock(clock.Now), hook(clock))
		require.Equal(t, http.StatusOK, serveAt(t, l, clock, &lag).Code)
		// The next token comes 1.5 s after the first; the store answers 0.6 s after the clock read.
		lag = 600 * time.Millisecond
		w := serveAt(t, l, clock, &lag)
		require.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, "1", w.Header().Get("Retry-After"), "0.9 s remain when the answer leaves")
	})

	t.Run("an epoch reset names the same instant", func(t *testing.T) {
		for _, d := range []time.Duration{0, 700 * time.Millisecond} {
			clock := newFakeClock()
			l := mustLimiter([]Rule{{Name: "api", Algorithm: "fixed-window", Limit: 5, Window: time.Minute}},
				WithClock(clock.Now), WithDialect("github"), hook(clock))
			lag = d
			w := serveAt(t, l, clock, &lag)
			require.Equal(t, http.StatusOK, w.Code)
			// The window of 1,700,000,000.3 s ends at 1,700,000,040 s.
			assert.Equal(t, "1700000040", w.Header().Get("X-RateLimit-Reset"), "lag %v", d)
		}
	})
}
