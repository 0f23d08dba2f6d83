package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/testserver"
)

// orders is a server that applies POSTed orders behind testserver's Idempotency: it counts, per
// Idempotency-Key, how often an order was applied (the application ran), and, per run of the
// batch (phase), how often each key arrived at the server at all (replays included).
type orders struct {
	srv   *testserver.Server
	phase atomic.Int64
	// onApply is called with the number of orders applied so far, inside the handler before it
	// answers; may be nil.
	onApply atomic.Pointer[func(n int64)]

	mu       sync.Mutex
	applied  map[string]int
	arrivals map[int64]map[string]int
	total    atomic.Int64
}

// newOrders starts the server; each application takes latency, so that requests are in flight
// when a run is stopped.
func newOrders(t *testing.T, latency time.Duration) *orders {
	o := &orders{applied: map[string]int{}, arrivals: map[int64]map[string]int{}}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		o.mu.Lock()
		o.applied[r.Header.Get("Idempotency-Key")]++
		o.mu.Unlock()
		n := o.total.Add(1)
		if f := o.onApply.Load(); f != nil {
			(*f)(n)
		}
		time.Sleep(latency)
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, "order %d\n", n)
	})
	hook := func(_ time.Time, r *http.Request, _ testserver.Result) {
		o.mu.Lock()
		defer o.mu.Unlock()
		p := o.phase.Load()
		if o.arrivals[p] == nil {
			o.arrivals[p] = map[string]int{}
		}
		o.arrivals[p][r.Header.Get("Idempotency-Key")]++
	}
	o.srv = testserver.NewT(t, testserver.WithIdempotency(0), testserver.WithHandler(app),
		testserver.WithRequestHook(hook), testserver.WithArrivalLog(0))
	return o
}

// writeOrders writes an input of n POSTs, one order each, and returns its path.
func writeOrders(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("# orders to place\n")
	for i := range n {
		fmt.Fprintf(&b, `{"method":"POST","url":"/orders","body":{"order":%d}}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "orders.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// readOutput returns the records of an output file.
func readOutput(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "line %q", sc.Text())
		recs = append(recs, r)
	}
	require.NoError(t, sc.Err())
	return recs
}

// doneIDs returns the ids of the done records, failing the test if one is recorded done twice.
func doneIDs(t *testing.T, recs []record) map[string]bool {
	t.Helper()
	done := map[string]bool{}
	for _, r := range recs {
		if r.Done {
			require.False(t, done[r.ID], "line %d recorded done twice", r.Line)
			done[r.ID] = true
		}
	}
	return done
}

// checkResumed asserts what a job stopped after its first run and resumed to its end must show:
// every order recorded done exactly once, applied exactly once, and no request for an order that
// the first run had recorded done.
func checkResumed(t *testing.T, o *orders, n int, out string, done1 map[string]bool) {
	t.Helper()
	recs := readOutput(t, out)
	done := doneIDs(t, recs)
	assert.Len(t, done, n, "every order recorded done")
	job := recs[0].Job
	o.mu.Lock()
	defer o.mu.Unlock()
	assert.Len(t, o.applied, n, "every order applied")
	for key, k := range o.applied {
		assert.Equal(t, 1, k, "order %s applied once", key)
		id, ok := strings.CutPrefix(key, job+"-")
		assert.True(t, ok && done[id], "key %q is the job's and names a recorded order", key)
	}
	for key := range o.arrivals[2] {
		id := strings.TrimPrefix(key, job+"-")
		assert.False(t, done1[id], "order %s was recorded done by the first run, and sent again", id)
	}
}

// TestResumeAfterACancelledRun: a run whose context is cancelled mid-way (its requests in flight
// cancelled, unrecorded) and resumed with the same command plus -resume finishes the job: the
// resumed run sends exactly the orders not recorded done, the one whose answer the cancel lost is
// replayed by the server rather than applied again.
func TestResumeAfterACancelledRun(t *testing.T) {
	const n, stopAt = 300, 100
	o := newOrders(t, time.Millisecond)
	in, out := writeOrders(t, n), filepath.Join(t.TempDir(), "results.jsonl")
	args := []string{"-url", o.srv.URL(), "-input", in, "-output", out, "-c", "8"}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o.phase.Store(1)
	o.onApply.Store(ptr(func(k int64) {
		if k == stopAt {
			cancel() // the order being applied now loses its answer
		}
	}))
	code, s1, _ := runJSON(t, ctx, args...)
	assert.Equal(t, 1, code)
	assert.True(t, s1.Cancelled)
	recs1 := readOutput(t, out)
	done1 := doneIDs(t, recs1)
	require.Len(t, recs1, len(done1), "only finished requests are recorded, and these all succeeded")
	require.Less(t, len(done1), stopAt, "the order whose answer was lost is not recorded")
	require.Equal(t, n, s1.Requests)
	assert.Equal(t, len(done1), s1.Succeeded)

	o.phase.Store(2)
	o.onApply.Store(nil)
	code, s2, _ := runJSON(t, t.Context(), append(args, "-resume")...)
	require.Equal(t, 0, code)
	assert.Equal(t, len(done1), s2.Skipped)
	assert.Equal(t, n-len(done1), s2.Succeeded)
	checkResumed(t, o, n, out, done1)
	st := o.srv.Stats().Server.Idempotency
	assert.Positive(t, st.Replayed, "the orders in flight at the cancel were sent again and replayed")
	o.mu.Lock()
	assert.Len(t, o.arrivals[2], n-len(done1), "the resumed run sent each order not recorded done once")
	o.mu.Unlock()
}

// TestDrainRecordsWhatIsInFlight: drained mid-way (the first SIGINT), the run starts no new request,
// lets those in flight finish and records them, and exits 1 with a summary; resumed, it sends only
// the rest, so no order reaches the server twice.
func TestDrainRecordsWhatIsInFlight(t *testing.T) {
	const n, stopAt = 200, 60
	o := newOrders(t, time.Millisecond)
	in, out := writeOrders(t, n), filepath.Join(t.TempDir(), "results.jsonl")
	args := []string{"-url", o.srv.URL(), "-input", in, "-output", out, "-c", "8"}

	drain := make(chan struct{})
	o.phase.Store(1)
	o.onApply.Store(ptr(func(k int64) {
		if k == stopAt {
			close(drain)
		}
	}))
	var stdout, stderr bytes.Buffer
	code := session{stdin: eofReader{}, stdout: &stdout, stderr: &stderr, drain: drain}.run(t.Context(), args)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout.String(), "interrupted: requests that had not finished are counted as failed (cancelled); the same command with -resume sends them")
	done1 := doneIDs(t, readOutput(t, out))
	assert.Equal(t, int(o.total.Load()), len(done1), "every order applied was recorded: the drain lost none")
	assert.GreaterOrEqual(t, len(done1), stopAt)
	assert.Less(t, len(done1), n)

	o.phase.Store(2)
	o.onApply.Store(nil)
	code, s2, _ := runJSON(t, t.Context(), append(args, "-resume")...)
	require.Equal(t, 0, code)
	assert.Equal(t, len(done1), s2.Skipped)
	checkResumed(t, o, n, out, done1)
	assert.Zero(t, o.srv.Stats().Server.Idempotency.Replayed, "nothing was sent twice")
}

// TestResumeAfterAKilledProcess builds the batch binary, kills it with SIGKILL mid-way (no
// summary, no cleanup: its output ends wherever the kill found it), and resumes the job with the
// same command plus -resume.
func TestResumeAfterAKilledProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the batch binary")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to build the batch binary")
	}
	bin := filepath.Join(t.TempDir(), "batch")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const n, killAt = 400, 150
	o := newOrders(t, time.Millisecond)
	in, out := writeOrders(t, n), filepath.Join(t.TempDir(), "results.jsonl")
	args := []string{"-url", o.srv.URL(), "-input", in, "-output", out, "-c", "8", "-json"}

	cmd := exec.CommandContext(t.Context(), bin, args...)
	var proc atomic.Pointer[os.Process]
	o.phase.Store(1)
	o.onApply.Store(ptr(func(k int64) {
		if p := proc.Load(); k == killAt && p != nil {
			_ = p.Kill()
		}
	}))
	require.NoError(t, cmd.Start())
	proc.Store(cmd.Process)
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "killed")
	assert.False(t, ee.Exited(), "ended by the signal")
	done1 := doneIDs(t, readOutput(t, out))
	assert.Less(t, len(done1), killAt)

	o.phase.Store(2)
	o.onApply.Store(nil)
	resumed := exec.CommandContext(t.Context(), bin, append(args, "-resume")...)
	var stdout bytes.Buffer
	resumed.Stdout = &stdout
	require.NoError(t, resumed.Run(), "exit 0")
	var s2 jsonSummary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &s2))
	assert.Equal(t, len(done1), s2.Skipped)
	assert.Equal(t, n-len(done1), s2.Succeeded)
	checkResumed(t, o, n, out, done1)
}

func TestOutputFlags(t *testing.T) {
	srv := testserver.NewT(t, testserver.WithResponse(testserver.Response{Body: "héllo\n", Header: http.Header{"X-Answer": {"42"}}}))
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	require.NoError(t, os.WriteFile(in, []byte("/a\n/b\n"), 0o644))

	full := filepath.Join(dir, "full.jsonl")
	code, s, raw := runJSON(t, t.Context(), "-url", srv.URL(), "-input", in, "-output", full, "-output-body", "full", "-output-headers")
	require.Equal(t, 0, code)
	assert.Equal(t, 2, s.Succeeded)
	assert.Equal(t, full, raw["output"])
	assert.EqualValues(t, 2, raw["records"])
	for _, r := range readOutput(t, full) {
		require.NotNil(t, r.Body)
		assert.Equal(t, "héllo\n", *r.Body)
		assert.Equal(t, "42", r.Headers.Get("X-Answer"))
		assert.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, 1, r.Attempts)
		assert.True(t, r.Done)
		assert.Empty(t, r.BodySHA256)
	}

	digest := filepath.Join(dir, "digest.jsonl")
	code, _, _ = runJSON(t, t.Context(), "-url", srv.URL(), "-input", in, "-output", digest)
	require.Equal(t, 0, code)
	for _, r := range readOutput(t, digest) {
		assert.Nil(t, r.Body)
		assert.Nil(t, r.Headers)
		require.NotNil(t, r.BodyBytes)
		assert.Equal(t, int64(len("héllo\n")), *r.BodyBytes)
		sum := sha256.Sum256([]byte("héllo\n"))
		assert.Equal(t, hex.EncodeToString(sum[:]), r.BodySHA256)
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
