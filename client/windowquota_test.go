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

// TestWithWindowQuotaOption: invalid quotas never panic; Validate names them and every request
// fails with ErrInvalidOption, body closed, nothing sent. Valid ones pace every key with a window
// quota.
func TestWithWindowQuotaOption(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limit  int
		window time.Duration
		want   string // in the error; empty for a valid quota
	}{
		{"zero limit", 0, time.Second, "WithWindowQuota(0, 1s)"},
		{"negative limit", -5, time.Minute, "WithWindowQuota(-5, 1m0s)"},
		{"zero window", 100, 0, "WithWindowQuota(100, 0s)"},
		{"negative window", 100, -time.Second, "-1s"},
		{"window over 366 days", 100, 400 * 24 * time.Hour, "9600h0m0s"},
		{"per second", 200, time.Second, ""},
		{"per day", 10_000, 24 * time.Hour, ""},
		{"limit one", 1, time.Nanosecond, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { // the clock stands still unless the test sleeps
				opt := WithWindowQuota(tt.limit, tt.window)
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
				// The key's limiter is the quota: with the request sent, limit-1 more go at once,
				// the next one a window after the first.
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
				assert.Equal(t, tt.window, r.Delay(now))
			})
		})
	}
}

// TestWindowQuotaAgainstWindowServers: told the server's quota, a client sends 200 requests to a
// server allowing 50 per second in window bursts: they finish in 3 windows (the last burst starts 3
// s after the first), with no 429 and no denial at the server, where an even pace at the same rate
// needs 199/50 s. The client and a real net/http server talk over an in-memory network on virtual
// time.
func TestWindowQuotaAgainstWindowServers(t *testing.T) {
	const (
		limit   = 50
		n       = 200
		workers = 20
	)
	for _, tt := range []struct {
		name    string
		alg     string
		pace    Option
		elapsed time.Duration
	}{
		{"sliding log, window quota", algorithm.NameSlidingLog, WithWindowQuota(limit, time.Second), 3 * time.Second},
		{"fixed window, window quota", algorithm.NameFixedWindow, WithWindowQuota(limit, time.Second), 3 * time.Second},
		{"sliding log, even pace for comparison", algorithm.NameSlidingLog, WithLeakyBucket(limit, n), (n - 1) * time.Second / limit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim, err := testserver.NewLimiter([]testserver.Rule{{Algorithm: tt.alg, Limit: limit, Window: time.Second}})
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
