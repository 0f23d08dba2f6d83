package retry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/internal/pipenet"
	"github.com/steadyhttp/steady/retry"
)

// answer is how a timed server answers its n-th request (from 0), arriving at now.
type answer func(n int, now time.Time, h http.Header) (status int)

// timedServer records the (virtual) arrival time of each request and answers with fn.
type timedServer struct {
	fn       answer
	mu       sync.Mutex
	arrivals []time.Time
}

func (s *timedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	now := time.Now()
	s.mu.Lock()
	n := len(s.arrivals)
	s.arrivals = append(s.arrivals, now)
	s.mu.Unlock()
	code := s.fn(n, now, w.Header())
	w.WriteHeader(code)
	_, _ = io.WriteString(w, strings.Repeat("x", 100))
}

func (s *timedServer) gaps() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var g []time.Duration
	for i := 1; i < len(s.arrivals); i++ {
		g = append(g, s.arrivals[i].Sub(s.arrivals[i-1]))
	}
	return g
}

// throttledOnce answers 429 with the Retry-After (and optional Date) that ra computes from the
// arrival time, then 200.
func throttledOnce(ra func(now time.Time) (retryAfter, date string)) answer {
	return func(n int, now time.Time, h http.Header) int {
		if n > 0 {
			return http.StatusOK
		}
		v, date := ra(now)
		h.Set("Retry-After", v)
		if date != "" {
			h.Set("Date", date)
		}
		return http.StatusTooManyRequests
	}
}

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// TestRetryNeverArrivesBeforeRetryAfter: a retry waits the server's Retry-After, and a date's one
// second more (the instant it means may lie up to a second after the date, which is whole
// seconds: ratelimitheader.DateGrain).
func TestRetryNeverArrivesBeforeRetryAfter(t *testing.T) {
	const rfc850 = "Monday, 02-Jan-06 15:04:05 GMT"
	tests := []struct {
		name     string
		ra       func(now time.Time) (string, string)
		jitter   float64
		min, max time.Duration
	}{
		{"delay-seconds", func(time.Time) (string, string) { return "2", "" }, 0.1, 2 * time.Second, 2200 * time.Millisecond},
		{"delay-seconds, no jitter", func(time.Time) (string, string) { return "2", "" }, 0, 2 * time.Second, 2 * time.Second},
		{"delay-seconds, full jitter", func(time.Time) (string, string) { return "2", "" }, 1, 2 * time.Second, 4 * time.Second},
		{"IMF-fixdate with Date", func(now time.Time) (string, string) {
			return httpDate(now.Add(3 * time.Second)), httpDate(now)
		}, 0.1, 4 * time.Second, 4400 * time.Millisecond},
		{"server clock an hour ahead", func(now time.Time) (string, string) {
			return httpDate(now.Add(time.Hour + 3*time.Second)), httpDate(now.Add(time.Hour))
		}, 0.1, 4 * time.Second, 4400 * time.Millisecond},
		{"server clock an hour behind", func(now time.Time) (string, string) {
			return httpDate(now.Add(-time.Hour + 3*time.Second)), httpDate(now.Add(-time.Hour))
		}, 0, 4 * time.Second, 4 * time.Second},
		{"RFC 850 date", func(now time.Time) (string, string) {
			return now.Add(4 * time.Second).UTC().Format(rfc850), httpDate(now)
		}, 0, 5 * time.Second, 5 * time.Second},
		{"asctime date", func(now time.Time) (string, string) {
			return now.Add(5 * time.Second).UTC().Format(time.ANSIC), httpDate(now)
		}, 0, 6 * time.Second, 6 * time.Second},
		{"date without Date header", func(now time.Time) (string, string) {
			return httpDate(now.Add(2 * time.Second)), ""
		}, 0, 3 * time.Second, 3 * time.Second},
		{"date in the past", func(now time.Time) (string, string) {
			return httpDate(now.Add(-time.Minute)), httpDate(now)
		}, 0.1, 0, retry.DefaultBaseDelay}, // no time named: the backoff's first step
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &timedServer{fn: throttledOnce(tt.ra)}
				tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithRetryAfterJitter(tt.jitter))
				require.NoError(t, err)
				resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				assert.Equal(t, 200, resp.StatusCode)
				gaps := srv.gaps()
				require.Len(t, gaps, 1)
				assert.GreaterOrEqual(t, gaps[0], tt.min, "retried before the server's Retry-After")
				assert.LessOrEqual(t, gaps[0], tt.max)
			})
		})
	}
}

func TestRetryAfterOnEveryRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &timedServer{fn: func(n int, _ time.Time, h http.Header) int {
			switch n {
			case 0:
				h.Set("Retry-After", "7")
				return 429
			case 1:
				h.Set("Retry-After", "1")
				return 503
			case 2:
				return 502 // no Retry-After: exponential backoff from the base delay
			}
			return 200
		}}
		tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithRetryAfterJitter(0),
			retry.WithBaseDelay(time.Second), retry.WithMaxDelay(time.Second))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(must(http.NewRequest("PUT", "http://api.test/", strings.NewReader("v"))))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		gaps := srv.gaps()
		require.Len(t, gaps, 3)
		assert.Equal(t, 7*time.Second, gaps[0])
		assert.Equal(t, 1*time.Second, gaps[1])
		assert.LessOrEqual(t, gaps[2], time.Second)
	})
}

func TestExponentialBackoffBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &timedServer{fn: func(n int, _ time.Time, _ http.Header) int {
			if n < 5 {
				return 503
			}
			return 200
		}}
		tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithMaxAttempts(6),
			retry.WithBaseDelay(time.Second), retry.WithMaxDelay(4*time.Second))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, 200, resp.StatusCode)
		gaps := srv.gaps()
		require.Len(t, gaps, 5)
		for i, limit := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second} {
			assert.LessOrEqual(t, gaps[i], limit, "gap %d above min(max, base·2^n)", i)
		}
	})
}

func TestRetryAfterNotWaitedOut(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		timeout    time.Duration
		opts       []retry.Option
		wantCause  error
	}{
		{"above the default maximum", "61", 0, nil, retry.ErrRetryAfterTooLong},
		{"above a configured maximum", "5", 0, []retry.Option{retry.WithMaxRetryAfter(4 * time.Second)}, retry.ErrRetryAfterTooLong},
		{"past the context deadline", "10", 5 * time.Second, nil, retry.ErrWouldExceedDeadline},
		{"ending at the context deadline", "5", 5 * time.Second, nil, retry.ErrWouldExceedDeadline},
		{"past the maximum elapsed time", "10", 0, []retry.Option{retry.WithMaxElapsed(9 * time.Second)}, retry.ErrMaxElapsed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &timedServer{fn: func(_ int, _ time.Time, h http.Header) int {
					h.Set("Retry-After", tt.retryAfter)
					return 429
				}}
				obs := &events{}
				tr, err := retry.NewTransport(pipenet.Serve(t, srv), append(tt.opts, retry.WithObserver(obs))...)
				require.NoError(t, err)
				ctx := context.Background()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				start := time.Now()
				resp, err := tr.RoundTrip(must(http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)))
				require.NoError(t, err)
				assert.Equal(t, 429, resp.StatusCode)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				assert.Len(t, body, 100, "the response is returned with its body")
				assert.Zero(t, time.Since(start), "returned at once")
				assert.Len(t, srv.gaps(), 0, "one attempt")
				assert.Equal(t, []string{"attempt 1", "gave up after 1: 429: " + tt.wantCause.Error()}, obs.all())
			})
		})
	}
}

func TestMaxElapsedBoundsTheWholeRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &timedServer{fn: func(_ int, _ time.Time, h http.Header) int {
			h.Set("Retry-After", "3")
			return 429
		}}
		tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithMaxElapsed(8*time.Second),
			retry.WithRetryAfterJitter(0))
		require.NoError(t, err)
		start := time.Now()
		resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, []time.Duration{3 * time.Second, 3 * time.Second}, srv.gaps(), "a third wait would end at 9s")
		assert.Equal(t, 6*time.Second, time.Since(start))
	})
}

// The elapsed time counts from the start of the first attempt, however long it took to come back.
func TestMaxElapsedCountsTheFirstAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &timedServer{fn: func(n int, _ time.Time, h http.Header) int {
			if n == 0 {
				time.Sleep(2500 * time.Millisecond) // a slow first answer
			}
			h.Set("Retry-After", "3")
			return 429
		}}
		tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithMaxElapsed(8*time.Second),
			retry.WithRetryAfterJitter(0))
		require.NoError(t, err)
		start := time.Now()
		resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, []time.Duration{5500 * time.Millisecond}, srv.gaps(), "a second wait would end at 8.5s")
		assert.Equal(t, 5500*time.Millisecond, time.Since(start))
	})
}

func TestServerPacedRetriesDoNotSpendTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &timedServer{fn: func(n int, _ time.Time, h http.Header) int {
			if n < 4 {
				h.Set("Retry-After", "1")
				return 429
			}
			return 200
		}}
		budget, err := retry.NewBudget(2, 1) // one retry of its own
		require.NoError(t, err)
		tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithBudget(budget))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, 200, resp.StatusCode)
		assert.Len(t, srv.gaps(), 4)
		assert.Equal(t, 2.0, budget.Tokens("api.test"))
	})
}

func TestCancelDuringWaitReturnsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &timedServer{fn: func(_ int, _ time.Time, h http.Header) int {
			h.Set("Retry-After", "30")
			return 503
		}}
		obs := &events{}
		tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithObserver(obs))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(1500*time.Millisecond, cancel)
		req, bodies := trackedRequest(t, "PUT", "http://api.test/", []byte("payload"))
		req = req.WithContext(ctx)

		start := time.Now()
		resp, err := tr.RoundTrip(req)
		assert.Equal(t, 1500*time.Millisecond, time.Since(start), "returned when the context ended")
		assert.Nil(t, resp)
		assert.ErrorIs(t, err, context.Canceled)
		var rerr *retry.Error
		require.ErrorAs(t, err, &rerr)
		require.Len(t, rerr.Attempts, 1)
		assert.Equal(t, 503, rerr.Attempts[0].Status)
		assert.GreaterOrEqual(t, rerr.Attempts[0].Wait, 30*time.Second)
		synctest.Wait()
		for i, b := range bodies() {
			assert.True(t, b.closed.Load(), "request body %d not closed", i)
		}
		assert.Len(t, bodies(), 1, "no body fetched for an attempt that was never sent")
		assert.Len(t, srv.gaps(), 0)
		assert.Equal(t, []string{"attempt 1", "retry 1 after 503", "gave up after 1: 503: context canceled"}, obs.all())
	})
}

// TestZeroRetryAfterBacksOff: a server that answers "Retry-After: 0" (or a date gone by) and
// refuses again is retried on the backoff's schedule, not at once: five refusals in a row, each
// retry after a wait, the waits growing as the backoff's steps (full jitter below each).
func TestZeroRetryAfterBacksOff(t *testing.T) {
	for _, ra := range []string{"0", "Sun, 06 Nov 1994 08:49:37 GMT"} {
		t.Run(ra, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &timedServer{fn: func(n int, now time.Time, h http.Header) int {
					if n >= 5 {
						return http.StatusOK
					}
					h.Set("Retry-After", ra)
					return http.StatusTooManyRequests
				}}
				tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithMaxAttempts(6), retry.WithBudget(nil))
				require.NoError(t, err)
				resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				gaps := srv.gaps()
				require.Len(t, gaps, 5)
				step := retry.DefaultBaseDelay
				for i, g := range gaps {
					assert.Greater(t, g, time.Duration(0), "retry %d sent at once", i+1)
					assert.LessOrEqual(t, g, step, "retry %d waited past its backoff step", i+1)
					step *= 2
				}
			})
		})
	}
}

// TestDateAtTheBoundIsWaited: a Retry-After date a whole WithMaxRetryAfter away (a limiter with
// one-minute windows whose quota ran out in a window's first second, saying the window's end) is
// within the bound: the two dates are truncated to their seconds, and the second the date is read
// rounded up by does not push it past (a review found it given back as too long).
func TestDateAtTheBoundIsWaited(t *testing.T) {
	for _, tt := range []struct {
		name string
		ra   func(now time.Time) (string, string)
	}{
		{"delay-seconds", func(time.Time) (string, string) { return "60", "" }},
		{"IMF-fixdate", func(now time.Time) (string, string) {
			return httpDate(now.Add(time.Minute)), httpDate(now)
		}},
		{"RFC 1123 in UTC", func(now time.Time) (string, string) {
			return now.Add(time.Minute).UTC().Format(time.RFC1123), httpDate(now)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &timedServer{fn: throttledOnce(tt.ra)}
				tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithMaxRetryAfter(time.Minute))
				require.NoError(t, err)
				resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				assert.Equal(t, http.StatusOK, resp.StatusCode, "waited out, not given back")
			})
		})
	}
	t.Run("a date past the bound", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &timedServer{fn: throttledOnce(func(now time.Time) (string, string) {
				return httpDate(now.Add(time.Minute + time.Second)), httpDate(now)
			})}
			tr, err := retry.NewTransport(pipenet.Serve(t, srv), retry.WithMaxRetryAfter(time.Minute))
			require.NoError(t, err)
			resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "given back")
		})
	})
}
