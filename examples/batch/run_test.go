package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/testserver"
)

// fastServer are flags for an embedded server fast enough that tests take little real time.
var fastServer = []string{"-server-limit", "5000", "-server-burst", "5000"}

// runBatch runs the command with args and returns its exit status, stdout and stderr.
func runBatch(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// runJSON runs the command with -json added and decodes its one line of output.
func runJSON(t *testing.T, ctx context.Context, args ...string) (int, jsonSummary, map[string]any) {
	t.Helper()
	code, out, errOut := runBatch(t, ctx, append(args, "-json")...)
	require.True(t, strings.HasSuffix(out, "\n"), "stdout %q, stderr %q", out, errOut)
	require.Equal(t, 1, strings.Count(out, "\n"), "exactly one line on stdout: %q", out)
	var s jsonSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	require.Equal(t, s.Requests, s.Succeeded+s.Failed, "every request accounted for: %s", out)
	failures := 0
	for _, f := range s.FailureReasons {
		failures += f.Count
	}
	require.Equal(t, s.Failed, failures, "failure reasons add up to failed: %s", out)
	return code, s, raw
}

func TestJSONKeysAndConsistency(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"known pace", append([]string{"-n", "150", "-c", "8", "-rate", "2000"}, fastServer...)},
		{"known pace with burst", append([]string{"-n", "150", "-c", "8", "-rate", "2000", "-burst", "20"}, fastServer...)},
		{"unknown pace", append([]string{"-n", "150", "-c", "8"}, fastServer...)},
		{"throttled", []string{"-n", "20", "-c", "4", "-server-limit", "1000", "-server-burst", "10"}},
		{"POST bodies", append([]string{"-n", "60", "-c", "4", "-method", "post"}, fastServer...)},
		{"sliding log server", []string{"-n", "60", "-server-algorithm", "sliding-log", "-server-limit", "5000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, s, raw := runJSON(t, t.Context(), tt.args...)
			for _, k := range []string{"requests", "succeeded", "failed", "throttled_responses", "retries", "elapsed_s", "rate_rps"} {
				assert.Contains(t, raw, k)
			}
			assert.Equal(t, 0, code)
			assert.Equal(t, s.Requests, s.Succeeded)
			assert.Zero(t, s.Failed)
			require.Positive(t, s.ElapsedS)
			assert.InDelta(t, float64(s.Succeeded)/s.ElapsedS, s.RateRPS, 0.01*s.RateRPS+0.01)
			// The client saw every 429 the server sent, and retried each one.
			require.NotNil(t, s.ServerRequests)
			require.NotNil(t, s.ServerThrottled)
			assert.Equal(t, *s.ServerThrottled, s.ThrottledResponses)
			assert.Equal(t, s.ThrottledResponses, s.Retries)
			assert.Equal(t, int64(s.Requests)+s.Retries, *s.ServerRequests)
			assert.Positive(t, s.ServerLimitRPS)
			// Without -rate the client learns the pace, and the summary says what it learned.
			if !slices.Contains(tt.args, "-rate") {
				assert.Contains(t, raw, "learned_rate_rps")
			} else {
				assert.NotContains(t, raw, "learned_rate_rps")
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // in the one-line message
	}{
		{[]string{"-n", "-5"}, "-n -5"},
		{[]string{"-n", "0"}, "-n 0"},
		{[]string{"-n", "many"}, `"many"`},
		{[]string{"-c", "0"}, "-c 0"},
		{[]string{"-c", "100000"}, "-c 100000"},
		{[]string{"-rate", "NaN"}, "-rate NaN"},
		{[]string{"-rate", "-1"}, "-rate -1"},
		{[]string{"-rate", "+Inf"}, "-rate +Inf"},
		{[]string{"-burst", "0", "-rate", "5"}, "-burst 0"},
		{[]string{"-burst", "5"}, "-burst 5 needs -rate"},
		{[]string{"-margin", "0.1"}, "-margin 0.1 needs -rate, -quota or -counter"},
		{[]string{"-rate", "5", "-margin", "-0.1"}, "-margin -0.1"},
		{[]string{"-rate", "5", "-margin", "0.9"}, "-margin 0.9"},
		{[]string{"-rate", "5", "-margin", "NaN"}, "-margin NaN"},
		{[]string{"-quota", "200"}, `-quota "200"`},
		{[]string{"-quota", "0/1s"}, `-quota "0/1s"`},
		{[]string{"-quota", "x/1s"}, `-quota "x/1s"`},
		{[]string{"-quota", "5/0s"}, `-quota "5/0s"`},
		{[]string{"-quota", "5/soon"}, `-quota "5/soon"`},
		{[]string{"-quota", "5/1s", "-rate", "5"}, "give one known pace, not both"},
		{[]string{"-quota", "5/8780h", "-margin", "0.01"}, "-quota 5/8780h: its window stretched"},
		{[]string{"-rate", "5", "-burst", "9223372036854775807"}, "-burst 9223372036854775807"},
		{[]string{"-quota", "5/1s", "-shared", "redis://127.0.0.1:1/0"}, "cannot be shared"},
		{[]string{"-counter", "200"}, `-counter "200"`},
		{[]string{"-counter", "0/1s"}, `-counter "0/1s"`},
		{[]string{"-counter", "-3/1s"}, `-counter "-3/1s"`},
		{[]string{"-counter", "5/0s"}, `-counter "5/0s"`},
		{[]string{"-counter", "5/9000h"}, `-counter "5/9000h"`},
		{[]string{"-counter", "5/1s", "-rate", "5"}, "-counter 5/1s and -rate 5: give one known pace, not both"},
		{[]string{"-counter", "5/1s", "-quota", "5/1s"}, "-counter 5/1s and -quota 5/1s: give one known pace, not both"},
		{[]string{"-counter", "5/1s", "-shared", "redis://127.0.0.1:1/0"}, "-counter 5/1s cannot be shared"},
		{[]string{"-url", "://nope"}, `"://nope"`},
		{[]string{"-url", "ftp://example.com/"}, `"ftp://example.com/"`},
		{[]string{"-url", "http://"}, `"http://"`},
		{[]string{"-url", "example.com/items"}, `"example.com/items"`},
		{[]string{"-url", "http://127.0.0.1:1/", "-server-limit", "5"}, "-server-limit"},
		{[]string{"-method", "FETCH"}, `"FETCH"`},
		{[]string{"-timeout", "-1s"}, "-timeout -1s"},
		{[]string{"-attempts", "0"}, "-attempts 0"},
		{[]string{"-max-delay", "0s"}, "-max-delay 0s"},
		{[]string{"-server-algorithm", "magic"}, `"magic"`},
		{[]string{"-server-limit", "0"}, "-server-limit 0"},
		{[]string{"-server-window", "0s"}, "-server-window"},
		{[]string{"-server-algorithm", "fixed-window", "-server-burst", "5"}, "-server-burst 5"},
		{[]string{"-server-status", "200"}, "-server-status 200"},
		{[]string{"-nope"}, "-nope"},
		{[]string{"extra"}, `"extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runBatch(t, t.Context(), tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.True(t, strings.HasPrefix(errOut, "batch: "), errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			assert.Contains(t, errOut, tt.want)
		})
	}
}

func TestHelp(t *testing.T) {
	code, out, errOut := runBatch(t, t.Context(), "-h")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "-server-algorithm")
}

// faultyServer starts a testserver that answers a share of requests with 503 (no Retry-After) and
// resets a share of connections.
func faultyServer(t *testing.T) *testserver.Server {
	return testserver.NewT(t, testserver.WithFaults(testserver.Faults{
		ErrorRate: 0.10, ErrorStatuses: []int{http.StatusServiceUnavailable}, ResetRate: 0.05, Seed: 7,
	}))
}

func TestFaultsEveryRequestAccounted(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// retried: every fault is retried, so all succeed; otherwise every fault is a failure.
		retried bool
	}{
		{"GET is retried", []string{"-n", "200", "-c", "8"}, true},
		{"PUT is retried", []string{"-n", "100", "-c", "4", "-method", "PUT"}, true},
		{"POST without a key is sent once", []string{"-n", "100", "-c", "4", "-method", "POST"}, false},
		{"POST with keys is retried", []string{"-n", "100", "-c", "4", "-method", "POST", "-idempotency-keys"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := faultyServer(t)
			args := append([]string{"-url", srv.URL() + "/items", "-max-delay", "20ms"}, tt.args...)
			code, s, _ := runJSON(t, t.Context(), args...)
			st := srv.Stats().Server
			require.NotNil(t, st)
			faults := st.Errors + st.Resets
			require.Positive(t, faults, "the server injected faults")
			assert.Equal(t, st.Errors, s.ThrottledResponses, "every 503 was seen")
			if tt.retried {
				assert.Equal(t, 0, code)
				assert.Equal(t, s.Requests, s.Succeeded)
				// Every fault cost exactly one more request. Steady retried every 503; a reset
				// connection that net/http had reused from its pool is retried by net/http itself
				// (for idempotent requests), below steady, so steady may not see all resets.
				assert.Equal(t, int64(s.Requests)+faults, st.Requests)
				assert.GreaterOrEqual(t, s.Retries, st.Errors)
				assert.LessOrEqual(t, s.Retries, faults)
				return
			}
			assert.Equal(t, 1, code)
			assert.Equal(t, faults, int64(s.Failed), "each fault is one reported failure")
			assert.Zero(t, s.Retries)
			assert.Equal(t, int64(s.Requests), st.Requests, "no POST sent twice")
			var reasons []string
			for _, f := range s.FailureReasons {
				reasons = append(reasons, f.Reason)
			}
			assert.Contains(t, reasons, "status 503 Service Unavailable")
		})
	}
}

func TestFinalFailuresAreReported(t *testing.T) {
	tests := []struct {
		name          string
		status        int
		args          []string
		wantReason    string
		wantThrottled int64 // per request
		wantRetries   int64 // per request
	}{
		{"404 is not retried", http.StatusNotFound, nil, "status 404 Not Found", 0, 0},
		{"503 until attempts run out", http.StatusServiceUnavailable, []string{"-attempts", "3"}, "status 503 Service Unavailable", 3, 2},
		{"500 is not retried", http.StatusInternalServerError, nil, "status 500 Internal Server Error", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testserver.NewT(t, testserver.WithResponse(testserver.Response{Status: tt.status}))
			const n = 20
			args := append([]string{"-url", srv.URL(), "-n", "20", "-c", "4", "-max-delay", "5ms"}, tt.args...)
			code, s, _ := runJSON(t, t.Context(), args...)
			assert.Equal(t, 1, code)
			assert.Equal(t, n, s.Failed)
			assert.Equal(t, []reasonCount{{tt.wantReason, n}}, s.FailureReasons)
			assert.Equal(t, n*tt.wantThrottled, s.ThrottledResponses)
			assert.Equal(t, n*tt.wantRetries, s.Retries)
		})
	}
}

func TestConnectionRefusedIsReported(t *testing.T) {
	srv := testserver.NewT(t)
	url := srv.URL()
	require.NoError(t, srv.Close()) // nothing listens there any more
	code, s, _ := runJSON(t, t.Context(), "-url", url, "-n", "5", "-c", "2", "-attempts", "2", "-max-delay", "1ms")
	assert.Equal(t, 1, code)
	assert.Equal(t, 5, s.Failed)
	require.Len(t, s.FailureReasons, 1)
	assert.Contains(t, s.FailureReasons[0].Reason, "connection refused")
	assert.Contains(t, s.FailureReasons[0].Reason, "attempts exhausted")
	assert.Equal(t, int64(5), s.Retries)
}

// TestFirstTransportRetryIsSaid: a URL nothing answers (a typo, a server not started) retried in
// silence looks like a hang (20 attempts with backoff: minutes). The first retry after a transport
// error is said on stderr once, with the error; -v says each.
func TestFirstTransportRetryIsSaid(t *testing.T) {
	srv := testserver.NewT(t)
	url := srv.URL()
	require.NoError(t, srv.Close()) // nothing listens there any more
	code, _, errOut := runBatch(t, t.Context(), "-url", url, "-n", "5", "-c", "2", "-attempts", "3", "-max-delay", "1ms", "-json")
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, strings.Count(errOut, "retrying after"), "once, however many retries: %q", errOut)
	assert.Contains(t, errOut, "connection refused")

	code, _, errOut = runBatch(t, t.Context(), append([]string{"-n", "20", "-c", "4", "-json"}, fastServer...)...)
	assert.Equal(t, 0, code)
	assert.NotContains(t, errOut, "retrying after", "nothing failed: nothing to say")
}

func TestCancelledRunCountsUnfinished(t *testing.T) {
	t.Run("before it starts", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		code, s, _ := runJSON(t, ctx, append([]string{"-n", "30"}, fastServer...)...)
		assert.Equal(t, 1, code)
		assert.Equal(t, 30, s.Failed)
		assert.True(t, s.Cancelled)
		assert.Equal(t, []reasonCount{{reasonCancelled, 30}}, s.FailureReasons)
	})

	t.Run("with requests in flight", func(t *testing.T) {
		// The first 10 requests are answered; the next ones hang until their client gives up.
		// The run is cancelled once every worker is waiting on a hung request.
		const n, workers, answered = 50, 4, 10
		var arrivals atomic.Int64
		allHung := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k := arrivals.Add(1)
			if k <= answered {
				return
			}
			if k == answered+workers {
				close(allHung)
			}
			<-r.Context().Done()
		})
		srv := testserver.NewT(t, testserver.WithHandler(h))
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-allHung
			cancel()
		}()
		defer cancel()
		code, s, _ := runJSON(t, ctx, "-url", srv.URL(), "-n", "50", "-c", "4")
		assert.Equal(t, 1, code)
		assert.True(t, s.Cancelled)
		assert.Equal(t, answered, s.Succeeded)
		assert.Equal(t, n-answered, s.Failed)
		assert.Equal(t, []reasonCount{{reasonCancelled, n - answered}}, s.FailureReasons)
		assert.Equal(t, int64(answered+workers), arrivals.Load(), "no request started after the cancel")
	})

	t.Run("text summary says so", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		code, out, _ := runBatch(t, ctx, append([]string{"-n", "3"}, fastServer...)...)
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "failed:              3\n")
		assert.Contains(t, out, "interrupted")
		assert.Contains(t, out, "     3  cancelled\n")
	})
}

func TestTimeoutIsReported(t *testing.T) {
	srv := testserver.NewT(t, testserver.WithResponse(testserver.Response{Latency: time.Minute}))
	code, s, _ := runJSON(t, t.Context(), "-url", srv.URL(), "-n", "4", "-c", "4", "-timeout", "50ms")
	assert.Equal(t, 1, code)
	assert.Equal(t, []reasonCount{{"timeout (-timeout 50ms)", 4}}, s.FailureReasons)
}

func TestTextSummary(t *testing.T) {
	code, out, errOut := runBatch(t, t.Context(), append([]string{"-n", "40", "-rate", "4000"}, fastServer...)...)
	assert.Equal(t, 0, code)
	for _, want := range []string{
		"requests:            40\n",
		"succeeded:           40\n",
		"failed:              0\n",
		"throttled responses: 0\n",
		"retries:             0\n",
		"pace:                told 4000 req/s, paced at 3980 req/s (margin 0.5%), burst 1\n",
		"server saw:          40 requests, 0 throttled\n",
		"of its limit 5000 req/s (token-bucket, burst 5000); all 40 requests fit in its burst of 5000\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "failures:")
	assert.Contains(t, errOut, "batch: 40 GET requests to http://127.0.0.1:")
}

func TestNoProgressBarWhenStderrIsNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer f.Close()
	var stdout bytes.Buffer
	code := run(t.Context(), append([]string{"-n", "30"}, fastServer...), &stdout, f)
	require.Equal(t, 0, code)
	got, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(got), "\n"), "only the description line: %q", got)
	assert.NotContains(t, string(got), "\r")
	assert.NotContains(t, string(got), "req/s")

	assert.False(t, isTerminal(f))
	assert.False(t, isTerminal(&bytes.Buffer{}))
	assert.IsType(t, noProgress{}, newProgress(f, 10, func() int64 { return 0 }))
}

// TestCounterFollowsTheCounter: told the server's sliding window counter (-counter) against a
// sliding-window server with that limit, the client sends the shrunk limit at once (47 of 50 with
// the margin widened to 5%, so that the loopback's jitter on a loaded machine cannot matter) and
// then as the counter admits, 46 per window: the server throttles nothing, and 150 requests cannot
// take less than the two more windows they need. (client/windowcounter_test.go asserts the exact
// times and no 429 at all, in virtual time.)
func TestCounterFollowsTheCounter(t *testing.T) {
	code, s, raw := runJSON(t, t.Context(), "-n", "150", "-counter", "50/1s", "-margin", "0.05",
		"-server-algorithm", "sliding-window", "-server-limit", "50")
	require.Equal(t, 0, code)
	assert.Equal(t, 150, s.Succeeded)
	assert.Equal(t, "50/1s", raw["known_counter"])
	assert.NotContains(t, raw, "known_quota")
	assert.NotContains(t, raw, "learned_rate_rps", "told, not learning")
	// A loopback stall of a whole request's share of the window could still let one in; more
	// would be the client's doing.
	assert.LessOrEqual(t, s.ThrottledResponses, int64(2))
	assert.GreaterOrEqual(t, s.ElapsedS, 2.0, "150 requests at 47, then 46 per window need two more windows")

	code, out, _ := runBatch(t, t.Context(), "-n", "10", "-counter", "50/1s",
		"-server-algorithm", "sliding-window", "-server-limit", "50")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "pace:                told a sliding window counter of 50/1s: its rule with 49 per 1s on epoch-aligned windows (margin 0.5%)")
}

// TestQuotaUsesTheWindow: told a quota per window (-quota) against a sliding-log server with that
// quota, the client sends the whole quota at once and then never more than it in any window: the
// server throttles nothing, and the run cannot take less than the two windows the quota needs for
// 150 requests. (The margin is widened so that the loopback's jitter on a loaded machine cannot
// matter: the test is about the client keeping the quota, not about timing.)
func TestQuotaUsesTheWindow(t *testing.T) {
	code, s, raw := runJSON(t, t.Context(), "-n", "150", "-quota", "50/1s", "-margin", "0.05",
		"-server-algorithm", "sliding-log", "-server-limit", "50")
	require.Equal(t, 0, code)
	assert.Equal(t, 150, s.Succeeded)
	assert.Equal(t, "50/1s", raw["known_quota"])
	// A loopback stall longer than the 50 ms of margin could still let one in; more would be the
	// client's doing. (client/windowquota_test.go asserts none at all, in virtual time.)
	assert.LessOrEqual(t, s.ThrottledResponses, int64(2))
	assert.GreaterOrEqual(t, s.ElapsedS, 2.0, "150 requests at 50 per window need two more windows")
}
