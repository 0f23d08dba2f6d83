package testserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// serveAt answers one request through l's middleware, whose request hook (between the decision and
// the answer) moves the clock by *lag, as a store's round trip or a wait for the key's lock does;
// *lag is then reset to zero.
func serveAt(t *testing.T, l *Limiter, _ *fakeClock, lag *time.Duration) *httptest.ResponseRecorder {
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

	// denied answers the second request to a bucket of one refilling every 1.5 s, decided with the
	// clock read before the store's trip of d and written after it.
	denied := func(t *testing.T, d time.Duration, opts ...Option) *httptest.ResponseRecorder {
		t.Helper()
		clock := newFakeClock()
		l := mustLimiter([]Rule{{Name: "api", Algorithm: "token-bucket", Limit: 2, Window: 3 * time.Second, Burst: 1}},
			append([]Option{WithClock(clock.Now), hook(clock)}, opts...)...)
		require.Equal(t, http.StatusOK, serveAt(t, l, clock, &lag).Code)
		lag = d
		w := serveAt(t, l, clock, &lag)
		require.Equal(t, http.StatusTooManyRequests, w.Code)
		return w
	}

	t.Run("a denial decided slowly", func(t *testing.T) {
		w := denied(t, 600*time.Millisecond)
		assert.Equal(t, "1", w.Header().Get("Retry-After"), "0.9 s remain when the answer leaves")
	})

	t.Run("a lag longer than the wait", func(t *testing.T) {
		w := denied(t, 2*time.Second) // the token came back 0.5 s before the answer left
		assert.Equal(t, "1", w.Header().Get("Retry-After"), "a denial names a wait")
		assert.Equal(t, `"api";r=0;t=0`, w.Header().Get("RateLimit"))
	})

	t.Run("a store that decides at its own clock", func(t *testing.T) {
		mem, err := NewMemoryStore(0)
		require.NoError(t, err)
		w := denied(t, 600*time.Millisecond, WithStore(ownClockStore{mem}))
		assert.Equal(t, "2", w.Header().Get("Retry-After"), "its waits are measured from its own decision: left as they are")
	})

	t.Run("a shaped request is held until its slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := mustLimiter([]Rule{{Name: "api", Algorithm: "leaky-bucket", Limit: 10, Window: time.Second, Shape: true}},
				WithRequestHook(func(time.Time, *http.Request, Result) { time.Sleep(lag) }))
			require.Equal(t, http.StatusOK, serveAt(t, l, nil, &lag).Code)
			// The second request's slot is 100 ms after the first; its decision's answer is
			// written 30 ms after the decision, and it is served at its slot, not 30 ms later.
			start := time.Now()
			lag = 30 * time.Millisecond
			require.Equal(t, http.StatusOK, serveAt(t, l, nil, &lag).Code)
			assert.Equal(t, 100*time.Millisecond, time.Since(start))
		})
	})

	t.Run("a GitHub-style denial names the window's end", func(t *testing.T) {
		for _, d := range []time.Duration{0, 1700 * time.Millisecond} {
			clock := newFakeClock()
			l := mustLimiter([]Rule{{Name: "api", Algorithm: "fixed-window", Limit: 1, Window: time.Minute}},
				WithClock(clock.Now), WithDialect("github"), hook(clock))
			require.Equal(t, http.StatusOK, serveAt(t, l, clock, &lag).Code)
			lag = d
			w := serveAt(t, l, clock, &lag)
			require.Equal(t, http.StatusForbidden, w.Code)
			assert.Equal(t, "1700000040", w.Header().Get("X-RateLimit-Reset"), "lag %v", d)
		}
	})

	t.Run("an epoch reset names the same instant", func(t *testing.T) {
		for _, d := range []time.Duration{0, 1700 * time.Millisecond} {
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

// ownClockStore is a memory store that says it decides at its own clock, as redisstore's default
// does.
type ownClockStore struct{ *MemoryStore }

func (ownClockStore) DecidesOnOwnClock() bool { return true }

// TestResultAge checks the arithmetic of Result.age: every wait shortened by the lag, none below
// zero, Never left as it is, and a lag of zero or less changing nothing.
func TestResultAge(t *testing.T) {
	res := Result{RetryAfter: 3 * time.Second, Delay: 100 * time.Millisecond, Rules: []RuleResult{
		{Reset: 2 * time.Second, RetryAfter: algorithm.Never, Delay: time.Second},
	}}
	same := res.clone()
	same.age(0)
	same.age(-time.Second)
	assert.Equal(t, res, same)
	res.age(1500 * time.Millisecond)
	assert.Equal(t, Result{RetryAfter: 1500 * time.Millisecond, Delay: 0, Rules: []RuleResult{
		{Reset: 500 * time.Millisecond, RetryAfter: algorithm.Never, Delay: 0},
	}}, res)
}
