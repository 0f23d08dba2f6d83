package main

import (
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/internal/pipenet"
	"github.com/steadyhttp/steady/testserver"
)

func TestToldPaceFor(t *testing.T) {
	tests := []struct {
		name   string
		s      setup
		margin float64
		want   toldPace
		str    string // steady-told's pace
		bucket string // xrate's pace
	}{
		{"token bucket", setup{algorithm: "token-bucket", limit: 200, window: time.Second, burst: 10}, 0.005,
			toldPace{rate: 199, burst: 9}, "199/s burst 9", "199/s burst 9"},
		{"leaky bucket", setup{algorithm: "leaky-bucket", limit: 200, window: time.Second, burst: 10}, 0.005,
			toldPace{rate: 199, burst: 9}, "199/s burst 9", "199/s burst 9"},
		{"bucket without margin", setup{algorithm: "token-bucket", limit: 200, window: time.Second, burst: 10}, 0,
			toldPace{rate: 200, burst: 10}, "200/s burst 10", "200/s burst 10"},
		{"burst a whole number after the margin", setup{algorithm: "token-bucket", limit: 50, window: time.Second, burst: 100}, 0.01,
			toldPace{rate: 49.5, burst: 99}, "49.5/s burst 99", "49.5/s burst 99"},
		{"burst rounds down", setup{algorithm: "leaky-bucket", limit: 10, window: time.Second, burst: 3}, 0.5,
			toldPace{rate: 5, burst: 1}, "5/s burst 1", "5/s burst 1"},
		{"burst at least 1", setup{algorithm: "token-bucket", limit: 10, window: time.Second, burst: 1}, 0.005,
			toldPace{rate: 9.95, burst: 1}, "9.95/s burst 1", "9.95/s burst 1"},
		{"fixed window", setup{algorithm: "fixed-window", limit: 200, window: time.Second, burst: 10}, 0.005,
			toldPace{rate: 199, burst: 1, quotaLimit: 200, quotaWindow: 1_005_025_126}, "200 per 1.005025126s", "199/s burst 1"},
		{"sliding log", setup{algorithm: "sliding-log", limit: 600, window: time.Minute, burst: 10}, 0.01,
			toldPace{rate: 9.9, burst: 1, quotaLimit: 600, quotaWindow: 60_606_060_607}, "600 per 1m0.606060607s", "9.9/s burst 1"},
		{"window without margin", setup{algorithm: "fixed-window", limit: 200, window: time.Second, burst: 10}, 0,
			toldPace{rate: 200, burst: 1, quotaLimit: 200, quotaWindow: time.Second}, "200 per 1s", "200/s burst 1"},
		{"window saturates", setup{algorithm: "sliding-log", limit: 1, window: math.MaxInt64 / 3 * 2, burst: 10}, 0.5,
			toldPace{rate: 1 / (float64(math.MaxInt64/3*2) / 1e9) * 0.5, burst: 1, quotaLimit: 1, quotaWindow: math.MaxInt64},
			"1 per 2562047h47m16.854775807s", "8.13152e-11/s burst 1"},
		{"sliding window counter: a counter of L(1-m), xrate an even pace at (L-1)/W", setup{algorithm: "sliding-window", limit: 200, window: time.Second, burst: 10}, 0.005,
			toldPace{rate: 198.005, burst: 1, counterLimit: 199, counterWindow: time.Second}, "a counter of 199 per 1s", "198.005/s burst 1"},
		{"sliding window counter, the limit rounded down", setup{algorithm: "sliding-window", limit: 20, window: 100 * time.Millisecond}, 0.1,
			toldPace{rate: 171, burst: 1, counterLimit: 18, counterWindow: 100 * time.Millisecond}, "a counter of 18 per 100ms", "171/s burst 1"},
		{"sliding window counter of 1", setup{algorithm: "sliding-window", limit: 1, window: time.Second}, 0.005,
			toldPace{rate: 0.995, burst: 1, counterLimit: 1, counterWindow: time.Second}, "a counter of 1 per 1s", "0.995/s burst 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toldPaceFor(tt.s, tt.margin)
			assert.InDelta(t, tt.want.rate, got.rate, 1e-9*tt.want.rate)
			assert.Equal(t, tt.want.burst, got.burst)
			assert.Equal(t, tt.want.quotaLimit, got.quotaLimit)
			assert.Equal(t, tt.want.quotaWindow, got.quotaWindow)
			assert.Equal(t, tt.want.quotaLimit > 0, got.usesQuota())
			assert.Equal(t, tt.want.counterLimit, got.counterLimit)
			assert.Equal(t, tt.want.counterWindow, got.counterWindow)
			assert.Equal(t, tt.want.counterLimit > 0, got.usesCounter())
			assert.Equal(t, tt.str, got.String())
			assert.Equal(t, tt.bucket, got.bucketString())
		})
	}
}

// The told clients against a real testserver limiter, in virtual time over an in-memory network
// (no jitter; the bubble's clock starts on a whole second, so the server's windows start with the
// batch): each paces exactly as told, so the batch ends when the told pace says it must, and draws
// no 429. Steady told a window quota finishes in window bursts, within 1/(1-m) of the physical
// limit. Against the sliding window counter steady told the counter keeps L' = ⌊L(1-m)⌋: L' at
// once, then L'-1 per window, each as soon as the previous window's weight leaves room; xrate's
// even pace is (L-1)/W less the margin (at L/W less a margin of at most 1/L, an even pace from a
// fresh start, one request more than R·t by time t with its burst of 1, finds no room at the next
// window boundary).
func TestToldClientsAgainstTheServer(t *testing.T) {
	const (
		n       = 400
		workers = 4
	)
	// The server: 200/s as 20 per 100ms, the buckets with a burst of 10.
	serverFor := func(alg string) setup {
		return setup{algorithm: alg, headers: true, limit: 20, window: 100 * time.Millisecond, burst: 10}
	}
	// pace is when the last of n requests goes at rate after first at once.
	pace := func(first int, rate float64) time.Duration {
		return time.Duration(float64(n-first) / rate * float64(time.Second))
	}
	// bursts is when the last of n requests goes in bursts of 20 every window.
	bursts := func(window time.Duration) time.Duration { return (n/20 - 1) * window }
	// counter is when the last of n requests goes against a counter of limit per 100ms from a
	// window's start: limit at once, then limit-1 per window, the c-th of a window (from 0) at
	// ⌈c×W/(limit-1)⌉ into it.
	counter := func(limit int) time.Duration {
		const w = 100 * time.Millisecond
		windows, c := (n-limit-1)/(limit-1)+1, (n-limit-1)%(limit-1)
		into := (time.Duration(c)*w + time.Duration(limit-2)) / time.Duration(limit-1)
		return time.Duration(windows)*w + into
	}
	require.Equal(t, 2*time.Second+211_111_112, counter(19), "19, then 18 per window: 21 windows and 3 more")
	require.Equal(t, 2*time.Second+341_176_471, counter(18), "18, then 17 per window: 22 windows and 8 more")
	require.Equal(t, 100_502_513*time.Nanosecond, toldPaceFor(serverFor("fixed-window"), 0.005).quotaWindow)
	require.Equal(t, 111_111_112*time.Nanosecond, toldPaceFor(serverFor("sliding-log"), 0.1).quotaWindow)

	tests := []struct {
		alg     string
		kind    clientKind
		margin  float64
		elapsed time.Duration // 0: draws 429s
	}{
		{"token-bucket", steadyTold, 0.005, pace(9, 199)},
		{"token-bucket", xrate, 0.005, pace(9, 199)},
		{"leaky-bucket", steadyTold, 0.005, pace(9, 199)},
		{"leaky-bucket", xrate, 0.005, pace(9, 199)},
		{"fixed-window", steadyTold, 0.005, bursts(100_502_513)},
		{"fixed-window", xrate, 0.005, pace(1, 199)},
		{"sliding-log", steadyTold, 0.005, bursts(100_502_513)},
		{"sliding-log", xrate, 0.005, pace(1, 199)},
		{"sliding-window", steadyTold, 0.005, counter(19)},
		{"sliding-window", xrate, 0.005, pace(1, 190*0.995)},
		{"token-bucket", steadyTold, 0.1, pace(9, 180)},
		{"fixed-window", steadyTold, 0.1, bursts(111_111_112)},
		{"sliding-log", xrate, 0.1, pace(1, 180)},
		{"sliding-window", steadyTold, 0.1, counter(18)},
		{"sliding-window", xrate, 0.1, pace(1, 171)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/m=%g", tt.alg, tt.kind, tt.margin), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := serverFor(tt.alg)
				var denied atomic.Int64
				h, err := testserver.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
					[]testserver.Rule{s.rule()}, testserver.WithHeaders(true),
					testserver.WithRequestHook(func(_ time.Time, _ *http.Request, res testserver.Result) {
						if !res.Allowed {
							denied.Add(1)
						}
					}))
				require.NoError(t, err)
				p, err := newPeerOn(tt.kind, toldPaceFor(s, tt.margin), pipenet.Serve(t, h))
				require.NoError(t, err)
				defer p.close()

				out := (&batch{peer: p, target: "http://api.test/items", n: n, workers: workers}).run(t.Context())
				if tt.elapsed == 0 {
					assert.Positive(t, denied.Load(), "429s")
					if tt.kind == steadyTold {
						assert.Equal(t, n, out.succeeded, "steady retries the 429s")
					}
					return
				}
				assert.Equal(t, n, out.succeeded)
				assert.Zero(t, denied.Load(), "429s")
				assert.Zero(t, p.retries.Load())
				assert.InDelta(t, tt.elapsed.Seconds(), out.elapsed.Seconds(), 1e-6, "elapsed")
				if tt.kind == steadyTold && tt.alg != "sliding-window" && tt.margin == 0.005 {
					ratio := out.elapsed.Seconds() / s.physicalLimit(n, out.start).Seconds()
					assert.LessOrEqual(t, ratio, 1.01, "issue 4's goal for steady told the policy")
				}
			})
		})
	}
}
