package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// get sends one GET and returns status, headers and body.
func get(t *testing.T, c *http.Client, url string, headers ...string) (int, http.Header, string) {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// TestRetryAfterIsEnough checks, for every algorithm and mode, through HTTP with a controllable
// clock, that a throttled client waiting exactly Retry-After seconds is admitted, and that the
// headers and the problem body agree.
func TestRetryAfterIsEnough(t *testing.T) {
	modes := []Rule{
		{Mode: ModeHard},
		{Mode: ModeSoft, SoftPercent: 50},
		{Mode: ModeElastic, Ceiling: 9, Capacity: 1_000},
	}
	for _, alg := range algorithm.Names() {
		for _, m := range modes {
			t.Run(alg+"/"+string(m.Mode), func(t *testing.T) {
				clock := newFakeClock()
				rule := m
				rule.Name, rule.Algorithm, rule.Limit, rule.Window = "api", alg, 6, 10*time.Second
				s := NewT(t, WithClock(clock.Now), WithRules(rule))
				c := newClient(t)
				rng := rand.New(rand.NewPCG(1, uint64(len(alg))))
				for round := range 25 {
					// Use up the quota.
					var status int
					var h http.Header
					var body string
					for range 20 {
						if status, h, body = get(t, c, s.URL()); status != http.StatusOK {
							break
						}
					}
					require.Equal(t, http.StatusTooManyRequests, status, "round %d", round)
					ra, err := strconv.Atoi(h.Get("Retry-After"))
					require.NoError(t, err)
					require.GreaterOrEqual(t, ra, 1)
					var p Problem
					require.NoError(t, json.Unmarshal([]byte(body), &p))
					assert.Equal(t, Problem{Type: ProblemType, Title: "Too Many Requests", Status: 429, Detail: p.Detail, RetryAfter: int64(ra), Policy: "api"}, p)
					info := ratelimitheader.Parse(h, clock.Now())
					assert.Equal(t, "api", info.Policy)
					assert.Equal(t, int64(6), info.Limit)
					assert.Equal(t, 10*time.Second, info.Window)
					assert.Equal(t, time.Duration(ra)*time.Second, info.RetryAfter)

					clock.Advance(time.Duration(ra) * time.Second)
					status, _, _ = get(t, c, s.URL())
					require.Equal(t, http.StatusOK, status, "round %d: waited Retry-After %ds", round, ra)
					// Move to a random phase for the next round.
					clock.Advance(time.Duration(rng.Int64N(int64(7 * time.Second))))
				}
			})
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	clock := newFakeClock()
	rule := Rule{Name: "api", Algorithm: "token-bucket", Limit: 5, Window: 10 * time.Second}
	t.Run("admitted", func(t *testing.T) {
		s := NewT(t, WithClock(clock.Now), WithRules(rule))
		status, h, body := get(t, newClient(t), s.URL()+"/x")
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, "ok\n", body)
		assert.Equal(t, `"api";q=5;w=10`, h.Get("RateLimit-Policy"))
		assert.Equal(t, `"api";r=4;t=2`, h.Get("RateLimit"))
		assert.Equal(t, "5", h.Get("X-RateLimit-Limit"))
		assert.Equal(t, "4", h.Get("X-RateLimit-Remaining"))
		assert.Equal(t, "2", h.Get("X-RateLimit-Reset"))
		assert.Empty(t, h.Get("Retry-After"))
	})
	t.Run("headers off", func(t *testing.T) {
		s := NewT(t, WithClock(clock.Now), WithRules(rule), WithHeaders(false))
		c := newClient(t)
		for range 5 {
			status, h, _ := get(t, c, s.URL())
			require.Equal(t, http.StatusOK, status)
			assert.Empty(t, h.Get("RateLimit"))
			assert.Empty(t, h.Get("X-RateLimit-Remaining"))
		}
		status, h, body := get(t, c, s.URL())
		assert.Equal(t, http.StatusTooManyRequests, status)
		for _, name := range []string{"Retry-After", "RateLimit", "RateLimit-Policy", "X-RateLimit-Limit", "Content-Type"} {
			assert.Empty(t, h.Get(name), name)
		}
		assert.Empty(t, body)
	})
	t.Run("status 503", func(t *testing.T) {
		s := NewT(t, WithClock(clock.Now), WithRules(rule), WithStatus(http.StatusServiceUnavailable))
		c := newClient(t)
		for range 5 {
			get(t, c, s.URL())
		}
		status, h, body := get(t, c, s.URL())
		assert.Equal(t, http.StatusServiceUnavailable, status)
		assert.Equal(t, "2", h.Get("Retry-After"))
		assert.Contains(t, body, `"status":503`)
	})
	t.Run("shadow marker", func(t *testing.T) {
		sh := rule
		sh.Mode = ModeShadow
		s := NewT(t, WithClock(clock.Now), WithRules(sh))
		c := newClient(t)
		for range 5 {
			_, h, _ := get(t, c, s.URL())
			assert.Empty(t, h.Get(HeaderShadow))
		}
		status, h, _ := get(t, c, s.URL())
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, ShadowWouldDeny, h.Get(HeaderShadow))
		assert.Equal(t, `"api";r=0;t=10`, h.Get("RateLimit"))
	})
	t.Run("custom response", func(t *testing.T) {
		s := NewT(t, WithResponse(Response{Status: http.StatusCreated, Body: `{"id":1}`, ContentType: "application/json",
			Header: http.Header{"X-Extra": {"1"}}}))
		status, h, body := get(t, newClient(t), s.URL())
		assert.Equal(t, http.StatusCreated, status)
		assert.Equal(t, `{"id":1}`, body)
		assert.Equal(t, "application/json", h.Get("Content-Type"))
		assert.Equal(t, "1", h.Get("X-Extra"))
		assert.Empty(t, h.Get("RateLimit"), "no rule matched: nothing to advertise")
	})
}

func TestOneKeyManyGoroutines(t *testing.T) {
	for _, alg := range algorithm.Names() {
		t.Run(alg, func(t *testing.T) {
			clock := newFakeClock()
			s := NewT(t, WithClock(clock.Now), WithRules(Rule{Name: "k", Key: KeyHeader("X-API-Key"), Algorithm: alg, Limit: 100, Window: time.Hour}))
			c := newClient(t)
			var admitted atomic.Int64
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for range 4 {
						r, _ := http.NewRequest(http.MethodGet, s.URL(), nil)
						r.Header.Set("X-API-Key", "shared")
						resp, err := c.Do(r)
						if err != nil {
							t.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							admitted.Add(1)
						}
					}
				})
			}
			wg.Wait()
			assert.Equal(t, int64(100), admitted.Load())
			assert.Equal(t, Counters{Allowed: 100, Denied: 156}, s.Stats().Keys["k"]["x-api-key:shared"])
		})
	}
}

func TestTrustedProxyThroughHTTP(t *testing.T) {
	rule := Rule{Name: "ip", Key: KeyIP, Limit: 1, Window: time.Hour}
	for _, trusted := range []bool{false, true} {
		t.Run(fmt.Sprint("trusted=", trusted), func(t *testing.T) {
			opts := []Option{WithRules(rule)}
			if trusted {
				opts = append(opts, WithTrustedProxies("127.0.0.0/8", "::1"))
			}
			s := NewT(t, opts...)
			c := newClient(t)
			ok := 0
			for i := range 3 {
				if status, _, _ := get(t, c, s.URL(), "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1)); status == http.StatusOK {
					ok++
				}
			}
			if trusted {
				assert.Equal(t, 3, ok, "one key per forwarded client")
			} else {
				assert.Equal(t, 1, ok, "forwarded headers ignored: one key for the loopback peer")
			}
		})
	}
}

func TestFaults(t *testing.T) {
	t.Run("errors", func(t *testing.T) {
		s := NewT(t, WithFaults(Faults{ErrorRate: 0.3, Seed: 7}))
		c := newClient(t)
		counts := map[int]int{}
		for range 300 {
			status, _, _ := get(t, c, s.URL())
			counts[status]++
		}
		errs := counts[500] + counts[502] + counts[503]
		assert.Equal(t, 300, counts[200]+errs, "only 200 and the default error statuses: %v", counts)
		assert.InDelta(t, 90, errs, 35, "about 30%% errors: %v", counts)
		for _, code := range []int{500, 502, 503} {
			assert.Positive(t, counts[code], "status %d drawn", code)
		}
		assert.Equal(t, int64(errs), s.Stats().Server.Errors)
	})
	t.Run("custom error statuses", func(t *testing.T) {
		s := NewT(t, WithFaults(Faults{ErrorRate: 1, ErrorStatuses: []int{502}}))
		status, _, _ := get(t, newClient(t), s.URL())
		assert.Equal(t, http.StatusBadGateway, status)
	})
	t.Run("resets", func(t *testing.T) {
		s := NewT(t, WithFaults(Faults{ResetRate: 0.5, Seed: 3}))
		tr := &http.Transport{DisableKeepAlives: true}
		t.Cleanup(tr.CloseIdleConnections)
		c := &http.Client{Transport: tr}
		failed := 0
		for range 40 {
			resp, err := c.Get(s.URL())
			if err != nil {
				failed++
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		}
		assert.Equal(t, s.Stats().Server.Resets, int64(failed))
		assert.Positive(t, failed)
		assert.Less(t, failed, 40)
	})
	t.Run("same seed, same faults", func(t *testing.T) {
		draws := func() []faultDraw {
			fi := newFaultInjector(Faults{ErrorRate: 0.5, ResetRate: 0.2, LatencyRate: 0.3, Latency: time.Second, Seed: 11})
			out := make([]faultDraw, 50)
			for i := range out {
				out[i] = fi.draw()
			}
			return out
		}
		assert.Equal(t, draws(), draws())
	})
	t.Run("bad faults", func(t *testing.T) {
		for _, f := range []Faults{{ErrorRate: 1.5}, {ResetRate: -0.1}, {LatencyRate: 2}, {Latency: -1}, {ErrorStatuses: []int{200}}} {
			_, err := New(WithFaults(f))
			assert.ErrorIs(t, err, ErrInvalidOption, "%+v", f)
		}
		_, err := New(WithResponse(Response{Status: 99}))
		assert.ErrorIs(t, err, ErrInvalidOption)
		_, err = New(WithResponse(Response{Latency: -time.Second}))
		assert.ErrorIs(t, err, ErrInvalidOption)
		_, err = New(WithArrivalLog(-1))
		assert.ErrorIs(t, err, ErrInvalidOption)
		_, err = New(WithAddr("256.0.0.1:0"))
		assert.Error(t, err)
		_, err = New(WithRules(Rule{Limit: 1}))
		assert.ErrorIs(t, err, ErrInvalidRule)
	})
}

func TestStatsAndHealthEndpoints(t *testing.T) {
	clock := newFakeClock()
	s := NewT(t, WithClock(clock.Now), WithRules(Rule{Name: "api", Key: KeyIP, Limit: 2, Window: time.Minute}))
	c := newClient(t)
	for range 5 {
		get(t, c, s.URL()+"/v1/x")
	}
	status, _, body := get(t, c, s.URL()+"/-/healthz")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok\n", body)
	status, h, body := get(t, c, s.URL()+"/-/stats")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	var st Stats
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.Equal(t, Counters{Allowed: 2, Denied: 3}, st.Rules["api"])
	require.NotNil(t, st.Server)
	assert.Equal(t, ServerStats{Requests: 5, Admitted: 2, Throttled: 3}, *st.Server)
	assert.Equal(t, 1, st.Store.Keys)
	assert.Len(t, st.Keys["api"], 1)
	var raw struct {
		Rules map[string]map[string]any `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &raw))
	for _, k := range []string{"allowed", "denied", "shadowed", "evictions"} {
		assert.Contains(t, raw.Rules["api"], k)
	}
}

func TestArrivalsAndHook(t *testing.T) {
	clock := newFakeClock()
	var hooked atomic.Int64
	s := NewT(t, WithClock(clock.Now), WithArrivalLog(3),
		WithRules(Rule{Name: "api", Limit: 2, Window: time.Minute}),
		WithRequestHook(func(now time.Time, r *http.Request, res Result) {
			assert.Equal(t, clock.Now(), now)
			hooked.Add(1)
		}))
	c := newClient(t)
	start := clock.Now()
	for i := range 5 {
		get(t, c, s.URL()+"/p"+strconv.Itoa(i))
		clock.Advance(time.Second)
	}
	assert.Equal(t, int64(5), hooked.Load())
	arr := s.Arrivals()
	require.Len(t, arr, 3, "a ring of 3")
	for i, a := range arr {
		assert.Equal(t, start.Add(time.Duration(i+2)*time.Second), a.Time)
		assert.Equal(t, "/p"+strconv.Itoa(i+2), a.Path)
		assert.Equal(t, []string{"global"}, a.Keys)
	}
	assert.False(t, arr[0].Allowed)
	assert.Positive(t, arr[0].RetryAfter)
	s.ResetArrivals()
	assert.Empty(t, s.Arrivals())
}

func TestServerClose(t *testing.T) {
	t.Run("idempotent", func(t *testing.T) {
		s, err := New()
		require.NoError(t, err)
		url := s.URL()
		assert.NoError(t, s.Close())
		assert.NoError(t, s.Close())
		assert.NoError(t, s.Shutdown(context.Background()))
		_, err = http.Get(url)
		assert.Error(t, err)
	})
	t.Run("ends held requests", func(t *testing.T) {
		s, err := New(WithResponse(Response{Latency: time.Hour}))
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			resp, err := http.Get(s.URL())
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		for s.Limiter().InFlight() == 0 {
			runtime.Gosched()
		}
		require.NoError(t, s.Close())
		assert.Error(t, <-done, "the held request was cut off")
	})
	t.Run("graceful shutdown", func(t *testing.T) {
		s, err := New()
		require.NoError(t, err)
		status, _, _ := get(t, newClient(t), s.URL())
		assert.Equal(t, http.StatusOK, status)
		assert.NoError(t, s.Shutdown(context.Background()))
		assert.NoError(t, s.Close())
	})
	t.Run("handler without listener", func(t *testing.T) {
		s := NewT(t, WithRules(Rule{Limit: 1, Window: time.Hour}))
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		assert.Equal(t, http.StatusOK, rec.Code)
		rec = httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code)
		assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "application/problem+json"))
	})
}

type fakeTB struct {
	failed   bool
	cleanups []func()
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) runCleanups() {
	for _, fn := range f.cleanups {
		fn()
	}
}

func TestNewT(t *testing.T) {
	var ft fakeTB
	s := NewT(&ft)
	require.NotNil(t, s)
	assert.False(t, ft.failed)
	require.Len(t, ft.cleanups, 1)
	ft.runCleanups()
	_, err := http.Get(s.URL())
	assert.Error(t, err, "closed by the cleanup")

	var bad fakeTB
	assert.Nil(t, NewT(&bad, WithStatus(1)))
	assert.True(t, bad.failed)
}

func TestWithHandler(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "upstream saw "+r.URL.Path)
	}))
	defer upstream.Close()
	proxy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(upstream.URL + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(w, resp.Body)
	})
	s := NewT(t, WithHandler(proxy), WithRules(Rule{Name: "api", Limit: 1, Window: time.Hour}))
	c := newClient(t)
	status, h, body := get(t, c, s.URL()+"/a")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "upstream saw /a", body)
	assert.Equal(t, `"api";q=1;w=3600`, h.Get("RateLimit-Policy"))
	status, _, _ = get(t, c, s.URL()+"/a")
	assert.Equal(t, http.StatusTooManyRequests, status)
	_, err := New(WithHandler(nil))
	assert.ErrorIs(t, err, ErrInvalidOption)
	http.DefaultClient.CloseIdleConnections()
}

// TestElasticThroughMiddleware uses the default load measure: requests held inside the wrapped
// handler are in flight, and the ceiling applies only while fewer than Capacity are.
func TestElasticThroughMiddleware(t *testing.T) {
	clock := newFakeClock()
	l := mustLimiter([]Rule{{Name: "e", Algorithm: "fixed-window", Limit: 2, Window: time.Hour, Mode: ModeElastic, Ceiling: 5, Capacity: 2}},
		WithClock(clock.Now))
	defer l.Close()
	release := make(chan struct{})
	h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-release
		}
	}))
	serve := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { assert.Equal(t, http.StatusOK, serve("/hold")) })
	}
	for l.InFlight() < 2 {
		runtime.Gosched()
	}
	// Two in flight = Capacity: no spare capacity, and the base limit (2) is used up.
	assert.Equal(t, http.StatusTooManyRequests, serve("/"))
	close(release)
	wg.Wait()
	// Nothing in flight: up to the ceiling (5), three more.
	assert.Equal(t, []int{200, 200, 200, 429}, []int{serve("/"), serve("/"), serve("/"), serve("/")})
	assert.Equal(t, Counters{Allowed: 5, Denied: 2, Elastic: 3}, l.Stats().Rules["e"])
}
