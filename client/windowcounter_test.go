package client

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/internal/pipenet"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestWithWindowCounterOption: invalid counters never panic; Validate names them and every
// request fails with ErrInvalidOption, body closed, nothing sent. Valid ones pace every key with a
// window counter.
func TestWithWindowCounterOption(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limit  int
		window time.Duration
		want   string // in the error; empty for a valid counter
	}{
		{"zero limit", 0, time.Second, "WithWindowCounter(0, 1s)"},
		{"negative limit", -5, time.Minute, "WithWindowCounter(-5, 1m0s)"},
		{"zero window", 100, 0, "WithWindowCounter(100, 0s)"},
		{"negative window", 100, -time.Second, "-1s"},
		{"window over 366 days", 100, 400 * 24 * time.Hour, "9600h0m0s"},
		{"per second", 200, time.Second, ""},
		{"per day", 10_000, 24 * time.Hour, ""},
		{"limit one", 1, time.Nanosecond, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The clock stands still unless the test sleeps, on a window boundary (2000-01-01 UTC).
			synctest.Test(t, func(t *testing.T) {
				opt := WithWindowCounter(tt.limit, tt.window)
				err := Validate(opt)
				sent := 0
				tr := NewTransport(roundTripFunc(func(req *http.Request) (*http.Response, error) {
					sent++
					req.Body.Close()
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
				}), opt)
				body := &trackedBody{Reader: strings.NewReader("x")}
				req, _ := http.NewRequest(http.MethodPost, "http://api.test/", body)
				resp, rtErr := tr.RoundTrip(req)
				assert.True(t, body.closed.Load(), "request body closed")
				if tt.want != "" {
					require.ErrorIs(t, err, ErrInvalidOption)
					assert.Contains(t, err.Error(), tt.want)
					assert.Nil(t, resp)
					assert.ErrorIs(t, rtErr, ErrInvalidOption)
					assert.Zero(t, sent)
					return
				}
				require.NoError(t, err)
				require.NoError(t, rtErr)
				resp.Body.Close()
				assert.Equal(t, 1, sent)
				_, learns := tr.LearnedRate("api.test")
				assert.False(t, learns, "the default adaptive pace was replaced")
				// The key's limiter is the counter: with the request sent, limit-1 more go at once;
				// the next one when the first window's weight, limit×(W-e), leaves room for one in
				// the window after: at e = W - ⌊(limit-1)×W/limit⌋ (for a limit of 1, the window
				// after that).
				l := tr.throttle.Limiter("api.test")
				require.NotNil(t, l)
				now := time.Now()
				for i := 1; i < tt.limit; i++ {
					r, err := l.Reserve(now)
					require.NoError(t, err)
					require.Zero(t, r.Delay(now), "request %d", i)
				}
				r, err := l.Reserve(now)
				require.NoError(t, err)
				w, n := tt.window, time.Duration(tt.limit)
				assert.Equal(t, w+w-w*(n-1)/n, r.Delay(now))
			})
		})
	}
}

// TestWindowCounterAgainstSlidingWindowServer: told the server's counter (50 per second), a
// client sends 200 requests to testserver's sliding window counter with no 429 and no denial at
// the server, exactly as fast as the counter allows: 50 at once, 49 in each of the next three
// windows, and the last 3 at 0, 1/49 and 2/49 s into the fifth (its weight 49×(1-e) leaves room
// for c more at e = c/49). The even pace of 49 per second that a client not knowing the windows
// keeps needs 199/49 s. The client and a real net/http server talk over an in-memory network on
// virtual time, whose clock starts on a window boundary.
func TestWindowCounterAgainstSlidingWindowServer(t *testing.T) {
	const (
		limit   = 50
		n       = 200
		workers = 20
	)
	for _, tt := range []struct {
		name    string
		pace    Option
		elapsed time.Duration
	}{
		{"window counter", WithWindowCounter(limit, time.Second), 4*time.Second + 40_816_327},
		{"even pace (limit-1)/W for comparison", WithLeakyBucket(limit-1, n), (n - 1) * (time.Second / (limit - 1))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim, err := testserver.NewLimiter([]testserver.Rule{{Algorithm: algorithm.NameSlidingWindow, Limit: limit, Window: time.Second}})
				require.NoError(t, err)
				ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
				base := pipenet.Serve(t, lim.Middleware(ok))
				obs := &counter{}
				c := New(WithBase(base), tt.pace, WithObserver(obs))
				start := time.Now()
				statuses := runBatch(t, c, "http://api.test/items", n, workers)
				elapsed := time.Since(start)

				assert.Equal(t, map[int]int{http.StatusOK: n}, statuses)
				assert.Zero(t, obs.status429.Load(), "429s drawn")
				assert.Zero(t, lim.Stats().Rules["default"].Denied, "denials at the server")
				assert.Equal(t, tt.elapsed, elapsed)
			})
		})
	}
}
