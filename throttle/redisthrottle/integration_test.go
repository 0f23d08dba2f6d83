package redisthrottle

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/throttle"
)

// These tests run in real time against a real testserver on loopback and a real redis-server:
// three "processes" (each its own go-redis client, HTTP transport and steady client stack) share
// one quota through Redis. They are kept short (a few seconds each) and assert what cannot flake:
// the server-side counts, and elapsed time only with a generous bound.

// proc is one client process.
type proc struct {
	c    *http.Client
	base *http.Transport

	mu   sync.Mutex
	lims []*Limiter
}

func newProc(t *testing.T, redisURL string, opts ...Option) *proc {
	t.Helper()
	p := &proc{base: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(p.base.CloseIdleConnections)
	f := Factory(newClient(t, redisURL), "steady-test:", opts...)
	p.c = client.New(client.WithBase(p.base), client.WithLimiter(func(key string) (throttle.Limiter, error) {
		l, err := f(key)
		if err == nil {
			p.mu.Lock()
			p.lims = append(p.lims, l.(*Limiter))
			p.mu.Unlock()
		}
		return l, err
	}))
	return p
}

// stats sums the stats of the process's limiters.
func (p *proc) stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s Stats
	for _, l := range p.lims {
		ls := l.Stats()
		s.Rate = ls.Rate
		s.Redis += ls.Redis
		s.Fallback += ls.Fallback
		s.Errors += ls.Errors
		s.Throttles += ls.Throttles
		s.Cuts += ls.Cuts
	}
	return s
}

// job runs n GETs of url spread over the processes' workers, taking items from one shared
// counter (a batch split over processes). It returns the elapsed time and the number of items
// done; failures are reported on t.
func job(t *testing.T, procs []*proc, workers, n int, url string, done *atomic.Int64) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for _, p := range procs {
		for range workers {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
					if err != nil {
						t.Error(err)
						return
					}
					resp, err := p.c.Do(req)
					if err != nil {
						t.Errorf("request failed: %v", err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("status %d", resp.StatusCode)
						return
					}
					done.Add(1)
				}
			})
		}
	}
	wg.Wait()
	return time.Since(start)
}

// arrivals records when the server decided each request and whether it admitted it.
type arrivals struct {
	mu  sync.Mutex
	evs []arrival
}

type arrival struct {
	at      time.Time
	allowed bool
}

func (a *arrivals) hook(now time.Time, _ *http.Request, res testserver.Result) {
	a.mu.Lock()
	a.evs = append(a.evs, arrival{now, res.Allowed})
	a.mu.Unlock()
}

// stalls reports how many arrivals were throttled, and how many of those came within a second
// after a stall: a gap between two arrivals longer than burst/rate. Requests paced evenly at the
// rate reach a token bucket of that burst without a 429 unless they are held up that long on
// their way and then arrive together, which on a loaded machine happens when the test process
// (client and server alike) is not scheduled for that long: the bucket cannot cover the bunch,
// and the 429s that follow (and the Retry-After pauses they bring) can last for a while. Such
// 429s say nothing about the limiter; any other does.
func (a *arrivals) stalls(burst int64, rate float64) (throttled, excused int, longest time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	limit := time.Duration(float64(burst) / rate * float64(time.Second))
	var lastStall time.Time
	for i, e := range a.evs {
		if i > 0 {
			if gap := e.at.Sub(a.evs[i-1].at); gap > limit {
				lastStall = e.at
				longest = max(longest, gap)
			}
		}
		if e.allowed {
			continue
		}
		throttled++
		if !lastStall.IsZero() && e.at.Sub(lastStall) <= time.Second {
			excused++
		}
	}
	return throttled, excused, longest
}

// TestSharedKnownRate: three processes told R share it: the server sees no 429 and admits every
// request, and the job takes about N/R (its last request is due at (N-1)/R). A 429 is excused only
// when the server's arrivals show that the test process stalled for longer than the server's
// burst covers (see arrivals.stalls); the elapsed bound is then not held either, since every 429
// pauses its process for the Retry-After (1 s).
func TestSharedKnownRate(t *testing.T) {
	const (
		rate    = 100
		n       = 300
		workers = 4
	)
	url := redistest.URL(t)
	for _, burst := range []int64{3, 5} {
		t.Run(fmt.Sprintf("server burst %d", burst), func(t *testing.T) {
			var arr arrivals
			srv := testserver.NewT(t, testserver.WithRequestHook(arr.hook), testserver.WithRules(testserver.Rule{
				Algorithm: "token-bucket", Limit: rate, Window: time.Second, Burst: burst,
			}))
			var procs []*proc
			for range 3 {
				// a deadline long enough that a loaded machine does not send a process to its
				// fallback: this test is about the shared schedule (TestRedisStopsMidRun is
				// about the fallback)
				procs = append(procs, newProc(t, url, WithRate(rate, 1), WithTimeout(time.Second)))
			}
			var done atomic.Int64
			elapsed := job(t, procs, workers, n, srv.URL()+"/item", &done)
			st := srv.Stats().Server
			ratio := elapsed.Seconds() / (float64(n) / rate)
			throttled, excused, longest := arr.stalls(burst, rate)
			t.Logf("server burst %d: %d requests in %v: %.3f x N/R; server admitted %d, throttled %d (%d within a second after a stall; longest stall %v)",
				burst, n, elapsed.Round(time.Millisecond), ratio, st.Admitted, st.Throttled, excused, longest.Round(time.Millisecond))
			if st.Admitted != n || done.Load() != n {
				t.Errorf("server admitted %d, %d done; want %d", st.Admitted, done.Load(), n)
			}
			if throttled != excused {
				t.Errorf("%d requests throttled without a stall of the test process, want none", throttled-excused)
			}
			if throttled == 0 && ratio > 1.15 {
				t.Errorf("elapsed %.3f x N/R, want <= 1.15", ratio)
			}
			for i, p := range procs {
				if s := p.stats(); s.Redis == 0 || s.Fallback != 0 {
					t.Errorf("process %d: %+v, want every reservation from Redis", i, s)
				}
			}
		})
	}
}

// TestSharedLearning: three processes that are not told the rate learn it together from a server
// that says nothing but 429: no request is lost and the share of 429s stays bounded.
func TestSharedLearning(t *testing.T) {
	const (
		rate    = 100
		n       = 400
		workers = 4
	)
	url := redistest.URL(t)
	srv := testserver.NewT(t, testserver.WithHeaders(false), testserver.WithRules(testserver.Rule{
		Algorithm: "token-bucket", Limit: rate, Window: time.Second, Burst: 5,
	}))
	var procs []*proc
	for range 3 {
		// A second's timeout: a loaded machine does not turn slow calls into outages here (the
		// learning alone is TestFallbackLearnsAlone's).
		procs = append(procs, newProc(t, url, WithTimeout(time.Second)))
	}
	var done atomic.Int64
	elapsed := job(t, procs, workers, n, srv.URL()+"/item", &done)
	st := srv.Stats().Server
	share := float64(st.Throttled) / float64(st.Requests)
	rates := []float64{}
	for _, p := range procs {
		rates = append(rates, p.stats().Rate)
	}
	t.Logf("%d requests in %v: %.3f x N/R; %d attempts, %d throttled (%.1f%%); learned rates %.1f",
		n, elapsed.Round(time.Millisecond), elapsed.Seconds()/(float64(n)/rate), st.Requests, st.Throttled, 100*share, rates)
	if done.Load() != n || st.Admitted != n {
		t.Errorf("%d done, %d admitted, want %d", done.Load(), st.Admitted, n)
	}
	if share > 0.15 {
		t.Errorf("%.1f%% of attempts throttled, want at most 15%%", 100*share)
	}
	for _, r := range rates {
		if r < rate/2 || r > 2*rate {
			t.Errorf("learned rate %.1f, want within [%d, %d]", r, rate/2, 2*rate)
		}
	}
}

// TestRedisStopsMidRun: Redis stops a third into the job and comes back at two thirds: the
// processes fall back to their share of the rate, every request completes, and they return to
// Redis.
func TestRedisStopsMidRun(t *testing.T) {
	const (
		rate    = 100
		n       = 300
		workers = 4
	)
	rs := redistest.Start(t)
	srv := testserver.NewT(t, testserver.WithRules(testserver.Rule{
		Algorithm: "token-bucket", Limit: rate, Window: time.Second, Burst: 5,
	}))
	var procs []*proc
	for range 3 {
		procs = append(procs, newProc(t, rs.URL(), WithRate(rate, 1), WithRecheck(100*time.Millisecond)))
	}
	var done atomic.Int64
	finished := make(chan time.Duration)
	go func() { finished <- job(t, procs, workers, n, srv.URL()+"/item", &done) }()
	var elapsed time.Duration
	var redisAtRestart int64
	stopped, restarted := false, false
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case elapsed = <-finished:
			break wait
		case <-tick.C:
			switch d := done.Load(); {
			case !stopped && d >= n/3:
				rs.Stop()
				stopped = true
			case stopped && !restarted && d >= 2*n/3:
				for _, p := range procs {
					redisAtRestart += p.stats().Redis
				}
				rs.Restart()
				restarted = true
			}
		}
	}
	var s Stats
	for _, p := range procs {
		ps := p.stats()
		s.Redis += ps.Redis
		s.Fallback += ps.Fallback
		s.Errors += ps.Errors
	}
	st := srv.Stats().Server
	t.Logf("%d requests in %v (%.3f x N/R); reservations: %d on Redis (%d before the restart), %d local; %d failed calls; server throttled %d",
		n, elapsed.Round(time.Millisecond), elapsed.Seconds()/(float64(n)/rate), s.Redis, redisAtRestart, s.Fallback, s.Errors, st.Throttled)
	if done.Load() != n || st.Admitted != n {
		t.Errorf("%d done, %d admitted, want %d", done.Load(), st.Admitted, n)
	}
	if !restarted || s.Fallback == 0 || s.Errors == 0 {
		t.Errorf("the fallback was not used: %+v", s)
	}
	if s.Redis <= redisAtRestart {
		t.Errorf("no reservation on Redis after it came back (%d before, %d after)", redisAtRestart, s.Redis)
	}
	if share := float64(st.Throttled) / float64(st.Requests); share > 0.10 {
		t.Errorf("%.1f%% throttled while falling back at a third of the rate each, want at most 10%%", 100*share)
	}
}

var _ redis.UniversalClient = (*redis.Client)(nil)
