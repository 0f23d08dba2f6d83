package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// fire sends n concurrent GETs to path and returns the responses, bodies read and closed.
func (in *instance) fire(t *testing.T, n int, path string) []*http.Response {
	t.Helper()
	resps := make([]*http.Response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := in.client.Get(in.url + path)
			if err != nil {
				errs[i] = err
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			resps[i], errs[i] = resp, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return resps
}

var delaySeconds = regexp.MustCompile(`^[1-9][0-9]*$`)

// checkThrottled checks that a throttled response carries a valid Retry-After (delay-seconds, at
// least 1, at most the window) and the RateLimit fields of the one rule.
func checkThrottled(t *testing.T, resp *http.Response, limit int64, window time.Duration) {
	t.Helper()
	h := resp.Header
	ra := h.Get("Retry-After")
	if !delaySeconds.MatchString(ra) {
		t.Fatalf("Retry-After = %q, want delay-seconds >= 1", ra)
	}
	// The longest wait is one window plus one request's share of it: the sliding window counter,
	// denied early in a window, admits again W/limit into the next one (while the previous window
	// still weighs almost whole); a whole second more for the rounding up.
	if secs, _ := strconv.ParseInt(ra, 10, 64); time.Duration(secs)*time.Second > window+window/time.Duration(limit)+time.Second {
		t.Errorf("Retry-After = %s s, longer than the window %v plus one request's share", ra, window)
	}
	for _, name := range []string{"RateLimit-Policy", "RateLimit"} {
		if _, err := httpsfv.UnmarshalList(h.Values(name)); err != nil || h.Get(name) == "" {
			t.Fatalf("%s = %q: not a structured-field list (%v)", name, h.Values(name), err)
		}
	}
	info := ratelimitheader.Parse(h, time.Now())
	if info.Policy != "default" || info.Limit != limit || info.Window != window || !info.HasRemaining || info.Remaining != 0 {
		t.Errorf("RateLimit fields %q / %q parse to %+v, want policy default, q=%d, w=%v, r=0",
			h.Get("RateLimit-Policy"), h.Get("RateLimit"), info, limit, window)
	}
	if h.Get("X-RateLimit-Limit") != strconv.FormatInt(limit, 10) || h.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("X-RateLimit-Limit/Remaining = %q/%q", h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"))
	}
	if ct := h.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
}

// TestConcurrentAdmission is the acceptance run: every algorithm at -limit 50 -window 1h
// -burst 50, 200 concurrent requests; hard admits exactly 50, soft +10% admits 55, shadow all
// 200, and every 429 carries Retry-After and the RateLimit fields.
func TestConcurrentAdmission(t *testing.T) {
	const (
		limit = 50
		n     = 200
	)
	modes := []struct {
		args     []string
		admitted int
	}{
		{[]string{"-mode", "hard"}, 50},
		{[]string{"-mode", "soft", "-soft-percent", "10"}, 55},
		{[]string{"-mode", "shadow"}, 200},
	}
	for _, alg := range algorithm.Names() {
		for _, m := range modes {
			t.Run(alg+"/"+m.args[1], func(t *testing.T) {
				args := append([]string{"-algorithm", alg, "-limit", "50", "-window", "1h", "-burst", "50"}, m.args...)
				in := start(t, args...)
				resps := in.fire(t, n, "/v1/items")
				admitted, marked := 0, 0
				for _, resp := range resps {
					switch resp.StatusCode {
					case http.StatusOK:
						admitted++
						if resp.Header.Get(testserver.HeaderShadow) == testserver.ShadowWouldDeny {
							marked++
						}
						if resp.Header.Get("RateLimit") == "" || resp.Header.Get("RateLimit-Policy") == "" {
							t.Fatalf("admitted response without RateLimit fields: %v", resp.Header)
						}
					case http.StatusTooManyRequests:
						checkThrottled(t, resp, limit, time.Hour)
					default:
						t.Fatalf("status %s", resp.Status)
					}
				}
				if admitted != m.admitted {
					t.Errorf("admitted %d of %d, want %d", admitted, n, m.admitted)
				}
				st := in.stats(t).Rules["default"]
				wantShadowed := 0
				if m.args[1] == "shadow" {
					wantShadowed = n - limit
				}
				if marked != wantShadowed || st.Shadowed != int64(wantShadowed) {
					t.Errorf("shadow-marked responses %d, stats shadowed %d, want %d", marked, st.Shadowed, wantShadowed)
				}
				if st.Denied != int64(n-admitted) {
					t.Errorf("stats denied = %d, want %d", st.Denied, n-admitted)
				}
			})
		}
	}
}

func TestHeadersOff(t *testing.T) {
	in := start(t, "-limit", "1", "-window", "1h", "-headers=false")
	if resp, _ := in.get(t, "/"); resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %s", resp.Status)
	}
	resp, body := in.get(t, "/")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second request: %s, want 429", resp.Status)
	}
	for name := range resp.Header {
		switch strings.ToLower(name) {
		case "date", "content-length", "content-type":
		default:
			t.Errorf("throttled response has header %s: %q", name, resp.Header.Get(name))
		}
	}
	if body != "" {
		t.Errorf("throttled body = %q, want none", body)
	}
}

func TestStatusAndKeys(t *testing.T) {
	in := start(t, "-limit", "1", "-window", "1h", "-status", "503", "-key", "header:X-API-Key")
	tests := []struct {
		key  string
		want int
	}{
		{"alpha", 200},
		{"alpha", 503},
		{"beta", 200},
		{"beta", 503},
		{"alpha", 503},
	}
	for i, tt := range tests {
		resp, _ := in.get(t, "/x", "X-API-Key", tt.key)
		if resp.StatusCode != tt.want {
			t.Errorf("request %d (key %s): %s, want %d", i, tt.key, resp.Status, tt.want)
		}
		if tt.want == 503 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("request %d: 503 without Retry-After", i)
		}
	}
	keys := in.stats(t).Keys["default"]
	if keys["x-api-key:alpha"].Allowed != 1 || keys["x-api-key:alpha"].Denied != 2 || keys["x-api-key:beta"].Denied != 1 {
		t.Errorf("per-key stats = %+v", keys)
	}
}

func TestStatsAndHealthz(t *testing.T) {
	in := start(t, "-limit", "3", "-window", "1h", "-algorithm", "fixed-window")
	for range 5 {
		in.get(t, "/")
	}
	for range 3 { // neither endpoint is rate limited nor counted
		resp, body := in.get(t, "/-/healthz")
		if resp.StatusCode != http.StatusOK || body != "ok\n" {
			t.Fatalf("/-/healthz: %s %q", resp.Status, body)
		}
	}
	st := in.stats(t)
	want := testserver.Counters{Allowed: 3, Denied: 2}
	if got := st.Rules["default"]; got != want {
		t.Errorf("/-/stats rules[default] = %+v, want %+v", got, want)
	}
	if st.Store.Keys != 1 {
		t.Errorf("/-/stats store keys = %d, want 1", st.Store.Keys)
	}
	resp, _ := in.get(t, "/-/stats")
	if resp.Header.Get("RateLimit") != "" {
		t.Errorf("/-/stats carries rate-limit headers: %v", resp.Header)
	}
}

// TestShapedLeakyBucket checks that -shape holds an admitted request until its slot instead of
// answering at once: with 2 per hour and a queue of 2, the second request is admitted (counted in
// /-/stats) but its slot is 30 minutes away, so it is still unanswered when the test gives up on
// it; a policing server would have answered it.
func TestShapedLeakyBucket(t *testing.T) {
	in := start(t, "-algorithm", "leaky-bucket", "-shape", "-limit", "2", "-window", "1h", "-burst", "2")
	if resp, _ := in.get(t, "/"); resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %s", resp.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.url+"/", nil)
		resp, err := in.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	for in.stats(t).Rules["default"].Allowed < 2 { // wait until the second request is admitted
		runtime.Gosched()
	}
	select {
	case err := <-answered:
		t.Fatalf("the shaped request was answered before its slot (err %v)", err)
	default:
	}
	if resp, _ := in.get(t, "/"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("third request: %s, want 429 (the queue of 2 is full)", resp.Status)
	}
	cancel()
	if err := <-answered; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled shaped request: err = %v, want context.Canceled", err)
	}
}

// upstreamRecorder is an httptest upstream that records what reaches it. Requests to /block wait
// until release is closed.
type upstreamRecorder struct {
	*httptest.Server
	hits    atomic.Int64
	entered chan string
	release chan struct{}
	once    sync.Once
}

func newUpstream(t *testing.T) *upstreamRecorder {
	u := &upstreamRecorder{entered: make(chan string, 16), release: make(chan struct{})}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		if strings.HasSuffix(r.URL.Path, "/block") {
			u.entered <- r.URL.Path
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("X-Upstream", "yes")
		fmt.Fprintf(w, "%s %s xff=%s", r.Method, r.URL.RequestURI(), r.Header.Get("X-Forwarded-For"))
	}))
	t.Cleanup(func() {
		u.unblock()
		u.Close()
	})
	return u
}

func (u *upstreamRecorder) unblock() { u.once.Do(func() { close(u.release) }) }

func TestUpstreamProxy(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "-limit", "2", "-window", "1h", "-upstream", up.URL+"/base")
	for i := range 2 {
		resp, body := in.get(t, "/v1/items?page=2")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Upstream") != "yes" {
			t.Fatalf("request %d: %s %v", i, resp.Status, resp.Header)
		}
		if body != "GET /base/v1/items?page=2 xff=127.0.0.1" {
			t.Errorf("upstream saw %q", body)
		}
		if resp.Header.Get("RateLimit") == "" {
			t.Errorf("proxied response without RateLimit fields")
		}
	}
	resp, _ := in.get(t, "/v1/items")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-Upstream") != "" {
		t.Errorf("third request: %s, upstream header %q; want 429 from the limiter", resp.Status, resp.Header.Get("X-Upstream"))
	}
	if got := up.hits.Load(); got != 2 {
		t.Errorf("upstream got %d requests, want 2", got)
	}
	if resp, body := in.get(t, "/-/healthz"); resp.StatusCode != http.StatusOK || body != "ok\n" || up.hits.Load() != 2 {
		t.Errorf("/-/healthz was proxied or failed: %s %q", resp.Status, body)
	}
}

func TestUpstreamDown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	in := start(t, "-limit", "5", "-window", "1h", "-upstream", url)
	resp, _ := in.get(t, "/")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %s, want 502", resp.Status)
	}
	in.stderr.waitLine(t, "upstream", in.exited)
}

// TestElastic checks both sides of elastic mode through the proxy: above the limit, requests are
// denied while the server is at capacity (one request held in the upstream, capacity 1) and
// admitted up to the ceiling once it has spare capacity again.
func TestElastic(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "-mode", "elastic", "-limit", "2", "-ceiling", "4", "-capacity", "1", "-window", "1h", "-upstream", up.URL)
	held := make(chan int, 1)
	go func() {
		resp, err := in.client.Get(in.url + "/block")
		if err != nil {
			held <- -1
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	<-up.entered // one request in flight: no spare capacity
	steps := []int{200, 429, 429}
	for i, want := range steps {
		if resp, _ := in.get(t, "/"); resp.StatusCode != want {
			t.Errorf("at capacity, request %d: %s, want %d", i, resp.Status, want)
		}
	}
	up.unblock()
	if code := <-held; code != http.StatusOK {
		t.Fatalf("held request: %d", code)
	}
	steps = []int{200, 200, 429}
	for i, want := range steps {
		if resp, _ := in.get(t, "/"); resp.StatusCode != want {
			t.Errorf("with spare capacity, request %d: %s, want %d", i, resp.Status, want)
		}
	}
	st := in.stats(t).Rules["default"]
	if st.Allowed != 4 || st.Elastic != 2 || st.Denied != 3 {
		t.Errorf("stats = %+v, want allowed 4 (2 elastic), denied 3", st)
	}
}

func TestConfigSettingsAndOverride(t *testing.T) {
	cfg := writeFile(t, "rules.json", `{"status": 503, "rules": [
		{"name": "api", "path_prefix": "/api/", "limit": 1, "window": "1h", "algorithm": "sliding-window"},
		{"name": "all", "limit": 100, "window": "1h", "mode": "shadow"}]}`)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"config status", nil, 503},
		{"flag overrides config", []string{"-status", "429"}, 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := start(t, append([]string{"-config", cfg}, tt.args...)...)
			if resp, _ := in.get(t, "/api/x"); resp.StatusCode != 200 {
				t.Fatalf("first: %s", resp.Status)
			}
			resp, body := in.get(t, "/api/x")
			if resp.StatusCode != tt.want || !strings.Contains(body, `"policy":"api"`) {
				t.Errorf("second: %s %q, want %d from rule api", resp.Status, body, tt.want)
			}
			if resp, _ := in.get(t, "/other"); resp.StatusCode != 200 {
				t.Errorf("/other: %s, want 200 (only rule all matches)", resp.Status)
			}
			st := in.stats(t)
			if st.Rules["api"].Denied != 1 || st.Rules["all"].Allowed != 2 || st.Rules["all"].Blocked != 1 {
				t.Errorf("stats = %+v", st.Rules)
			}
		})
	}
}

// TestReload replaces the rules through the reload channel (SIGHUP in the binary): unchanged
// rules keep their state, new rules apply, and a bad file leaves the old rules in place.
func TestReload(t *testing.T) {
	path := writeFile(t, "rules.json", `{"rules": [{"name": "a", "limit": 1, "window": "1h"}]}`)
	in := start(t, "-config", path)
	if resp, _ := in.get(t, "/"); resp.StatusCode != 200 {
		t.Fatalf("first: %s", resp.Status)
	}
	if resp, _ := in.get(t, "/"); resp.StatusCode != 429 {
		t.Fatalf("second: %s", resp.Status)
	}

	steps := []struct {
		name    string
		content string
		line    string // stderr line to wait for
		want    int    // status of the next GET /
	}{
		{"rule a unchanged keeps its state, rule b added",
			`{"rules": [{"name": "a", "limit": 1, "window": "1h"}, {"name": "b", "path_prefix": "/b", "limit": 5, "window": "1h"}]}`,
			"reloaded 2 rule(s)", 429},
		{"malformed file keeps the old rules", `{"rules": [`, "reload failed", 429},
		{"invalid rule keeps the old rules", `{"rules": [{"name": "a", "limit": 0, "window": "1h"}]}`, "reload failed", 429},
		{"unknown field keeps the old rules", `{"rules": [{"name": "a", "limit": 3, "windw": "1h"}]}`, "reload failed", 429},
		{"a new quota for a starts afresh", `{"rules": [{"name": "a", "limit": 3, "window": "1h"}]}`, "reloaded 1 rule(s)", 200},
		{"settings need a restart", `{"status": 503, "rules": [{"name": "a", "limit": 3, "window": "1h"}]}`, "take effect on restart", 200},
	}
	for _, s := range steps {
		replaceFile(t, path, s.content)
		in.reload <- nil
		line := in.stderr.waitLine(t, s.line, in.exited)
		if resp, _ := in.get(t, "/"); resp.StatusCode != s.want {
			t.Errorf("%s: status %s after %q, want %d", s.name, resp.Status, line, s.want)
		}
	}
	st := in.stats(t)
	if _, ok := st.Rules["b"]; !ok {
		t.Errorf("stats lack the reloaded rule b: %+v", st.Rules)
	}
}

func TestReloadWithoutConfig(t *testing.T) {
	in := start(t)
	in.reload <- nil
	in.stderr.waitLine(t, "no -config", in.exited)
	if resp, _ := in.get(t, "/"); resp.StatusCode != 200 {
		t.Errorf("after SIGHUP: %s", resp.Status)
	}
}

// TestGracefulShutdown cancels the context while a request is in progress: the request
// completes, and the command exits 0.
func TestGracefulShutdown(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "-upstream", up.URL)
	result := make(chan string, 1)
	go func() {
		resp, err := in.client.Get(in.url + "/block")
		if err != nil {
			result <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		result <- resp.Status + " " + string(body)
	}()
	<-up.entered
	in.cancel()
	in.stderr.waitLine(t, "shutting down", in.exited)
	up.unblock()
	if got := <-result; got != "200 OK GET /block xff=127.0.0.1" {
		t.Errorf("in-flight request during shutdown: %q", got)
	}
	if code := in.stop(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

// TestShutdownTimeout: a request that outlives -shutdown-timeout is cut off, and the command
// still exits 0.
func TestShutdownTimeout(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "-upstream", up.URL, "-shutdown-timeout", "1ms")
	failed := make(chan bool, 1)
	go func() {
		resp, err := in.client.Get(in.url + "/block")
		if err == nil {
			resp.Body.Close()
		}
		failed <- err != nil
	}()
	<-up.entered
	if code := in.stop(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if !<-failed {
		t.Errorf("the blocked request succeeded although the server was closed")
	}
	if !strings.Contains(in.stderr.String(), "-shutdown-timeout") {
		t.Errorf("stderr does not report the forced close: %q", in.stderr.String())
	}
}
