package retryablehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hashicorp "github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	steadyretry "github.com/steadyhttp/steady/adapter/retryablehttp"
	"github.com/steadyhttp/steady/internal/pipenet"
)

// recorder answers the n-th request (from 0) with answer and records arrival times.
type recorder struct {
	answer   func(n int, now time.Time, w http.ResponseWriter)
	mu       sync.Mutex
	arrivals []time.Time
}

func (s *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	now := time.Now()
	s.mu.Lock()
	n := len(s.arrivals)
	s.arrivals = append(s.arrivals, now)
	s.mu.Unlock()
	s.answer(n, now, w)
}

func (s *recorder) times() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

func hangUp(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// client is a retryablehttp client with steady's two hooks, or hashicorp's defaults.
func client(rt http.RoundTripper, steady bool) *hashicorp.Client {
	c := hashicorp.NewClient()
	c.Logger = nil
	c.HTTPClient = &http.Client{Transport: rt}
	c.RetryWaitMin = time.Millisecond
	c.RetryWaitMax = 10 * time.Millisecond
	c.RetryMax = 4
	if steady {
		c.CheckRetry = steadyretry.CheckRetry
		c.Backoff = steadyretry.Backoff
	}
	return c
}

func TestClientPOSTBrokenConnection(t *testing.T) {
	tests := []struct {
		name     string
		steady   bool
		key      string
		wantSent int
	}{
		{"steady: a POST is never sent twice", true, "", 1},
		{"steady: unless it carries a key, which it cannot see", true, "k", 1},
		{"hashicorp defaults send it again", false, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{answer: func(n int, _ time.Time, w http.ResponseWriter) {
				if n == 0 {
					hangUp(w)
					return
				}
				w.WriteHeader(http.StatusCreated)
			}}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			// No keep-alive: net/http would itself resend a request whose reused connection broke.
			base := &http.Transport{DisableKeepAlives: true}
			req, err := hashicorp.NewRequest("POST", srv.URL, strings.NewReader("charge $5"))
			require.NoError(t, err)
			if tt.key != "" {
				req.Header.Set("Idempotency-Key", tt.key)
			}
			resp, err := client(base, tt.steady).Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			assert.Len(t, rec.times(), tt.wantSent)
		})
	}
}

func TestClientRetriesWhatSteadyRetries(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		statuses   []int
		wantStatus int
		wantSent   int
	}{
		{"GET 503 502 200", "GET", []int{503, 502, 200}, 200, 3},
		{"GET 501", "GET", []int{501, 200}, 501, 1},
		{"GET 500", "GET", []int{500, 200}, 500, 1},
		{"POST 502", "POST", []int{502, 200}, 502, 1},
		{"POST 429 200", "POST", []int{429, 200}, 200, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{answer: func(n int, _ time.Time, w http.ResponseWriter) {
				w.WriteHeader(tt.statuses[min(n, len(tt.statuses)-1)])
			}}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			req, err := hashicorp.NewRequest(tt.method, srv.URL, strings.NewReader("x"))
			require.NoError(t, err)
			resp, err := client(srv.Client().Transport, true).Do(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			assert.Len(t, rec.times(), tt.wantSent)
		})
	}
}

func TestClientNeverRetriesBeforeRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		header func(now time.Time, h http.Header)
		steady bool
		lo, hi time.Duration
	}{
		{"steady, delay-seconds", func(_ time.Time, h http.Header) { h.Set("Retry-After", "2") }, true,
			2 * time.Second, 2200 * time.Millisecond},
		{"steady, date from a server clock an hour ahead", func(now time.Time, h http.Header) {
			h.Set("Date", now.Add(time.Hour).UTC().Format(http.TimeFormat))
			h.Set("Retry-After", now.Add(time.Hour+3*time.Second).UTC().Format(http.TimeFormat))
		}, true, 4 * time.Second, 4400 * time.Millisecond}, // and the date's second (DateGrain)
		// hashicorp's default ignores Date, so it waits the skew too.
		{"hashicorp default, same skewed server", func(now time.Time, h http.Header) {
			h.Set("Date", now.Add(time.Hour).UTC().Format(http.TimeFormat))
			h.Set("Retry-After", now.Add(time.Hour+3*time.Second).UTC().Format(http.TimeFormat))
		}, false, time.Hour, time.Hour + 3*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{answer: func(n int, now time.Time, w http.ResponseWriter) {
					if n == 0 {
						tt.header(now, w.Header())
						w.WriteHeader(http.StatusTooManyRequests)
						return
					}
					w.WriteHeader(http.StatusOK)
				}}
				c := client(pipenet.Serve(t, rec), tt.steady)
				req, err := hashicorp.NewRequest("GET", "http://api.test/", nil)
				require.NoError(t, err)
				resp, err := c.Do(req)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				times := rec.times()
				require.Len(t, times, 2)
				gap := times[1].Sub(times[0])
				assert.GreaterOrEqual(t, gap, tt.lo)
				assert.LessOrEqual(t, gap, tt.hi)
			})
		})
	}
}
