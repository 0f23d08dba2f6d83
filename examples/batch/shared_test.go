package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
)

func TestSharedFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-shared", "http://127.0.0.1:6379"}, `invalid -shared "http://127.0.0.1:6379"`},
		{[]string{"-shared", "127.0.0.1:6379"}, `invalid -shared "127.0.0.1:6379"`},
		{[]string{"-shared", "redis://127.0.0.1:6379/notadb"}, `invalid -shared "redis://127.0.0.1:6379/notadb"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runBatch(t, t.Context(), tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			assert.Contains(t, errOut, tt.want)
		})
	}
	cfg, err := parseFlags([]string{"-shared", "redis://127.0.0.1:6390/2", "-rate", "50"})
	require.NoError(t, err)
	require.NotNil(t, cfg.shared)
	assert.Equal(t, "127.0.0.1:6390", cfg.shared.Addr)
	assert.Equal(t, 2, cfg.shared.DB)
	assert.True(t, cfg.shared.ContextTimeoutEnabled)
}

// TestSharedInProcess: one run with -shared against the embedded server, in this process: the
// summary says the pace was learned together, and stderr reports the shared quota.
func TestSharedInProcess(t *testing.T) {
	url := redistest.URL(t)
	code, out, errOut := runBatch(t, t.Context(), "-n", "40", "-c", "4", "-shared", url, "-server-limit", "200")
	require.Equal(t, 0, code, "stdout %s\nstderr %s", out, errOut)
	assert.Contains(t, out, "learned together by the processes sharing the quota")
	assert.Contains(t, errOut, "batch: shared quota at "+url+": 1 process,")
	code, s, _ := runJSON(t, t.Context(), "-n", "40", "-c", "4", "-rate", "200", "-shared", url, "-server-limit", "200")
	require.Equal(t, 0, code)
	assert.Equal(t, 40, s.Succeeded)
	require.NotNil(t, s.Shared, "-json reports the shared quota")
	assert.Equal(t, 1, s.Shared.Processes)
	assert.Equal(t, 1, s.Shared.PeakProcesses)
	assert.Equal(t, int64(40), s.Shared.RedisReservations+s.Shared.LocalReservations)
	assert.InDelta(t, 200*(1-defaultMargin), s.Shared.PaceRPS, 0.01)
}

// TestSharedRedisDown: with Redis refusing connections the run still completes, paced locally, and
// says so: -json's shared object counts the local reservations and the failed calls, with the
// refused dial as the last error; -v logs the outage.
func TestSharedRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "redis://" + ln.Addr().String() + "/0"
	require.NoError(t, ln.Close()) // nothing listens there now
	code, s, _ := runJSON(t, t.Context(), "-n", "20", "-c", "4", "-shared", url, "-server-limit", "200")
	require.Equal(t, 0, code)
	assert.Equal(t, 20, s.Succeeded)
	require.NotNil(t, s.Shared)
	assert.Equal(t, int64(20), s.Shared.LocalReservations)
	assert.Positive(t, s.Shared.RedisErrors)
	assert.Contains(t, s.Shared.LastError, "refused")
	code, _, errOut := runBatch(t, t.Context(), "-n", "5", "-c", "1", "-v", "-shared", url, "-server-limit", "200")
	require.Equal(t, 0, code)
	assert.Contains(t, errOut, "Redis unreachable")
	assert.Contains(t, errOut, "Redis never answered; paced alone")
}

// stallGaps records the server's arrivals to tell 429s caused by the pacing from 429s that came
// within a second after a stall: a gap between two arrivals longer than burst/rate. Requests
// paced evenly at the rate get a 429 from a token bucket of that burst only if they were held up
// that long on their way and arrived bunched, which on a loaded machine happens when the
// processes are not scheduled for that long. Such 429s say nothing about the pacing; any other
// does.
type stallGaps struct {
	mu  sync.Mutex
	evs []struct {
		at      time.Time
		allowed bool
	}
}

func (g *stallGaps) hook(now time.Time, _ *http.Request, res testserver.Result) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.evs = append(g.evs, struct {
		at      time.Time
		allowed bool
	}{now, res.Allowed})
}

// span is the time from the first arrival to the last.
func (g *stallGaps) span() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.evs) == 0 {
		return 0
	}
	return g.evs[len(g.evs)-1].at.Sub(g.evs[0].at)
}

func (g *stallGaps) throttled(burst int64, rate float64) (n, afterStall int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	limit := time.Duration(float64(burst) / rate * float64(time.Second))
	var lastStall time.Time
	for i, e := range g.evs {
		if i > 0 && e.at.Sub(g.evs[i-1].at) > limit {
			lastStall = e.at
		}
		if e.allowed {
			continue
		}
		n++
		if !lastStall.IsZero() && e.at.Sub(lastStall) <= time.Second {
			afterStall++
		}
	}
	return n, afterStall
}

// TestSharedProcesses builds the batch binary and runs three batch processes at once with -shared
// against one testserver (in this process) whose token bucket admits R=100 requests per second
// with a burst of 5. Told R, together they must draw no 429 and their N=300 requests must span
// about (N-1)/R at the server.
func TestSharedProcesses(t *testing.T) {
	const (
		rate  = 100
		burst = 5
		each  = 100
		procs = 3
	)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to build the batch binary")
	}
	redisURL := redistest.URL(t)
	bin := filepath.Join(t.TempDir(), "batch")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var gaps stallGaps
	srv := testserver.NewT(t, testserver.WithRequestHook(gaps.hook), testserver.WithRules(testserver.Rule{
		Algorithm: "token-bucket", Limit: rate, Window: time.Second, Burst: burst,
	}))

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	type outcome struct {
		sum    jsonSummary
		stderr string
		err    error
	}
	results := make([]outcome, procs)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range procs {
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, bin, "-url", srv.URL()+"/items", "-n", fmt.Sprint(each), "-c", "4",
				"-rate", fmt.Sprint(rate), "-margin", "0", "-shared", redisURL, "-json")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			results[i].err = cmd.Run()
			results[i].stderr = stderr.String()
			if results[i].err == nil {
				results[i].err = json.Unmarshal(stdout.Bytes(), &results[i].sum)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)

	for i, r := range results {
		require.NoError(t, r.err, "process %d, stderr %s", i, r.stderr)
		assert.Equal(t, each, r.sum.Succeeded, "process %d", i)
	}
	st := srv.Stats().Server
	n := procs * each
	ideal := time.Duration(float64(n-1) / rate * float64(time.Second))
	ratio := gaps.span().Seconds() / ideal.Seconds()
	throttled, afterStall := gaps.throttled(burst, rate)
	t.Logf("%d processes x %d requests: server span %v = %.3f x (N-1)/R %v (wall clock with process start-up %v); process elapsed %.2fs %.2fs %.2fs; server admitted %d, throttled %d (%d after a stall)",
		procs, each, gaps.span().Round(time.Millisecond), ratio, ideal, wall.Round(time.Millisecond),
		results[0].sum.ElapsedS, results[1].sum.ElapsedS, results[2].sum.ElapsedS, st.Admitted, st.Throttled, afterStall)
	assert.Equal(t, int64(n), st.Admitted)
	assert.Equal(t, throttled, afterStall, "429s without a stall of the processes")
	if throttled == 0 {
		assert.LessOrEqual(t, ratio, 1.15, "the job's span at the server over (N-1)/R")
	}
}
