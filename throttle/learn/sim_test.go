package learn_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/throttle"
	"github.com/steadyhttp/steady/throttle/learn"
)

// simServer decides with a real testserver algorithm at the virtual now, behind a network whose
// round trip is split evenly between the two ways, each late by up to jitter (seeded).
type simServer struct {
	alg algorithm.Algorithm
	// "honest", "none", "lying" (the limit and remaining claimed ten times over), "shopify"
	// (Shopify's used/capacity: the level, not the rate), "window-end" (httprate's headers), "x-ratelimit"
	// (the triple, its reset a Unix time rounded up, with a Date header),
	// "constant-reset" (tollbooth's), "burst-limit" (throttled's) or "retry-1" (a constant
	// Retry-After of a second, and nothing else)
	headers  string
	rtt      time.Duration
	jitter   time.Duration
	capacity int64        // the bucket's, for "shopify"
	log      func(string) // with -trace under -one: every decision
	start    time.Time

	// spikeEvery, when positive, makes every spikeEvery-th leg (counted from 1, both ways) late
	// by spike more: a loaded host's rare long trip, beside the even jitter.
	spikeEvery int64
	spike      time.Duration

	// offset moves the algorithm's windows that far past the clock's aligned ones: go-chi/httprate
	// v0.16 aligns its windows to an offset, so that its reset, a window's end in whole Unix
	// seconds, is truncated by up to a second.
	offset time.Duration

	// refuseNth, when positive, is the decision (counted from 1) refused whatever the algorithm
	// says, as if another client had just taken the place: one collision from outside.
	refuseNth int64

	mu         sync.Mutex
	rng        *rand.Rand
	st         algorithm.State
	admitted   int64
	denied     int64
	decisions  int64
	legs       int64           // trips' legs begun, for spikeEvery
	admittedAt []time.Duration // since start, of every admitted request
}

func (s *simServer) leg() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.rtt / 2
	if s.jitter > 0 {
		d += time.Duration(s.rng.Int64N(int64(s.jitter)))
	}
	if s.legs++; s.spikeEvery > 0 && s.legs%s.spikeEvery == 0 {
		d += s.spike
	}
	return d
}

func (s *simServer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	time.Sleep(s.leg())
	resp := s.decide()
	time.Sleep(s.leg())
	return resp, nil
}

func (s *simServer) decide() *http.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	// The algorithm's windows begin at offset past the clock's aligned ones (httprate's, v0.16).
	d := s.alg.Decide(&s.st, now.Add(-s.offset), 1)
	s.decisions++
	if s.decisions == s.refuseNth && d.Allowed {
		d.Allowed, d.Remaining, d.RetryAfter = false, 0, max(d.ResetAfter, time.Nanosecond)
	}
	status := http.StatusOK
	if d.Allowed {
		s.alg.Commit(&s.st, now.Add(-s.offset), 1)
		s.admitted++
		s.admittedAt = append(s.admittedAt, now.Sub(s.start))
	} else {
		s.denied++
		status = http.StatusTooManyRequests
	}
	if s.log != nil {
		s.log(fmt.Sprintf("server %v allowed=%v remaining=%d", now.Sub(s.start), d.Allowed, d.Remaining))
	}
	h := http.Header{}
	f := ratelimitheader.Fields{Limit: d.Limit, Window: s.alg.Window(), Remaining: d.Remaining, Reset: d.ResetAfter, RetryAfter: d.RetryAfter}
	switch s.headers {
	case "honest":
		ratelimitheader.Write(h, f)
	case "shopify":
		// Shopify's REST call limit as its documentation shows it ("X-Shopify-Shop-Api-Call-Limit:
		// 32/40", a 429 with "Retry-After: 2.0"): the bucket's fill of its capacity, not its rate.
		h.Set("X-Shopify-Shop-Api-Call-Limit", fmt.Sprintf("%d/%d", s.capacity-d.Remaining, s.capacity))
		if !d.Allowed {
			h.Set("Retry-After", fmt.Sprintf("%.1f", math.Ceil(d.RetryAfter.Seconds()*10)/10))
		}
	case "window-end":
		// A sliding window counter that says the end of the current aligned window as its reset,
		// in epoch seconds, and the whole window as its Retry-After, as go-chi/httprate (v0.14,
		// limiter.go) writes its headers: the reset never lies beyond the window, so they look
		// like a fixed window's.
		// The server's clock is the virtual one moved to the present (synctest's starts in
		// 2000, whose epoch seconds no parser takes for an instant), and net/http's Date header
		// says it, truncated to the second, as a real server's does.
		w := s.alg.Window()
		clock := now.AddDate(26, 0, 0)
		h.Set("Date", clock.UTC().Format(http.TimeFormat))
		h.Set("X-RateLimit-Limit", fmt.Sprint(d.Limit))
		h.Set("X-RateLimit-Remaining", fmt.Sprint(max(d.Remaining, 0)))
		h.Set("X-RateLimit-Reset", fmt.Sprint(clock.Add(-s.offset).Truncate(w).Add(w).Add(s.offset).Unix()))
		if !d.Allowed {
			h.Set("Retry-After", fmt.Sprint(int64(w.Seconds())))
		}
	case "x-ratelimit":
		// The X-RateLimit-* triple alone with the reset as a Unix time in whole seconds,
		// rounded up, the instant the quota is whole again (a sliding window counter's is the
		// end of the next window), a Date header truncated to the second, and Retry-After in
		// whole seconds rounded up: a generic server of the most common form in the wild.
		clock := now.AddDate(26, 0, 0)
		h.Set("Date", clock.UTC().Format(http.TimeFormat))
		h.Set("X-RateLimit-Limit", fmt.Sprint(d.Limit))
		h.Set("X-RateLimit-Remaining", fmt.Sprint(max(d.Remaining, 0)))
		reset := clock.Add(d.ResetAfter)
		h.Set("X-RateLimit-Reset", fmt.Sprint((reset.UnixNano()+int64(time.Second)-1)/int64(time.Second)))
		if !d.Allowed {
			h.Set("Retry-After", fmt.Sprint(int64(math.Ceil(d.RetryAfter.Seconds()))))
		}
	case "constant-reset":
		// The limit per window and the tokens left, with the window itself as every reset and
		// no Retry-After, in the draft's first fields, as didip/tollbooth v7 writes them over
		// x/time/rate: a reset that bounds when the quota comes back, and nothing finer.
		h.Set("RateLimit-Limit", fmt.Sprint(d.Limit))
		h.Set("RateLimit-Remaining", fmt.Sprint(max(d.Remaining, 0)))
		h.Set("RateLimit-Reset", fmt.Sprint(int64(math.Ceil(s.alg.Window().Seconds()))))
	case "burst-limit":
		// The bucket's burst as the limit, with no window, the time until it is full again
		// rounded up to whole seconds as the reset, and a Retry-After rounded up alike, as
		// throttled/throttled v2 writes its GCRA's: a bucket that refills in under a second says
		// one second.
		h.Set("X-RateLimit-Limit", fmt.Sprint(s.capacity))
		h.Set("X-RateLimit-Remaining", fmt.Sprint(max(d.Remaining, 0)))
		h.Set("X-RateLimit-Reset", fmt.Sprint(int64(math.Ceil(d.ResetAfter.Seconds()))))
		if !d.Allowed {
			h.Set("Retry-After", fmt.Sprint(int64(math.Ceil(d.RetryAfter.Seconds()))))
		}
	case "retry-1":
		// No rate-limit header, and "Retry-After: 1" on every 429, whatever the wait: a proxy's
		// limit configured by hand, as HAProxy's `http-request return status 429 hdr Retry-After
		// 1` in front of its http_req_rate. An exploration aid for -one (no test: the 1.5x it
		// reproduces at 100/s is not met, see docs/learner-measurements.md).
		if !d.Allowed {
			h.Set("Retry-After", "1")
		}
	case "lying":
		f.Limit *= 10
		f.Remaining = f.Remaining*10 + 10
		f.RetryAfter = 0
		ratelimitheader.Write(h, f)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(http.NoBody), Request: nil}
}

type cell struct {
	alg     string
	limit   int64
	window  time.Duration
	burst   int64
	headers string
	rtt     time.Duration
	workers int
	n       int
}

type outcome struct {
	elapsed  time.Duration
	attempts int64
	denied   int64
	lost     int64
	limit    learn.Limit
	events   []string
	// admittedAt is when the server admitted each request, since the run began.
	admittedAt []time.Duration
}

func (o outcome) share() float64 { return float64(o.denied) / float64(max(o.attempts, 1)) }

// runCell sends c.n requests with c.workers workers through the default-shaped stack whose pace is
// the Learner, with the batch runner's retry settings, in virtual time.
func runCell(t *testing.T, c cell, seed uint64) outcome { return runCellWith(t, c, seed, nil) }

// runCellWith is runCell with the server adjusted by with (nil: as it is).
func runCellWith(t *testing.T, c cell, seed uint64, with func(*simServer)) outcome {
	var out outcome
	synctest.Test(t, func(t *testing.T) {
		alg, err := algorithm.New(c.alg, algorithm.Config{Limit: c.limit, Window: c.window, Burst: c.burst})
		if err != nil {
			t.Fatal(err)
		}
		srv := &simServer{alg: alg, headers: c.headers, capacity: c.burst, rtt: c.rtt, jitter: c.rtt / 10, rng: rand.New(rand.NewPCG(seed, 7)), start: time.Now()}
		if *trace && *one != "" {
			srv.log = func(s string) { t.Log(s) }
		}
		if with != nil {
			with(srv)
		}
		var mu sync.Mutex
		var lrn *learn.Learner
		start := time.Now()
		factory := learn.Factory(learn.WithObserver(func(e learn.Event) {
			out.events = append(out.events, fmt.Sprintf("%v %s/%s %s", time.Duration(e.At.UnixNano()-start.UnixNano()), e.Strategy, e.State, e.Detail))
		}))
		tr := client.NewTransport(srv,
			client.WithLimiter(func(key string) (throttle.Limiter, error) {
				l, err := factory(key)
				mu.Lock()
				lrn, _ = l.(*learn.Learner)
				mu.Unlock()
				return l, err
			}),
			client.WithMaxWait(0), simRetry())
		var next, lost atomic.Int64
		var wg sync.WaitGroup
		for range c.workers {
			wg.Go(func() {
				for next.Add(1) <= int64(c.n) {
					if !sendSim(tr) {
						lost.Add(1)
					}
				}
			})
		}
		wg.Wait()
		out.elapsed = time.Since(start)
		out.attempts = srv.admitted + srv.denied
		out.denied = srv.denied
		out.admittedAt = srv.admittedAt
		out.lost = lost.Load()
		mu.Lock()
		if lrn != nil {
			out.limit = lrn.LearnedLimit()
		}
		mu.Unlock()
	})
	return out
}

// simRetry is the batch runner's retry settings, as the simulated clients use them: no budget, no
// bound on the time, Retry-After waited out up to two hours.
func simRetry() client.Option {
	return client.WithRetry(retry.WithMaxAttempts(1000), retry.WithMaxElapsed(0), retry.WithBudget(nil),
		retry.WithMaxRetryAfter(2*time.Hour))
}

// sendSim sends one request through tr to the simulated server and reports whether it was
// admitted in the end.
func sendSim(tr http.RoundTripper) bool {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.sim/items", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// physical is the least time any client needs for the cell, from the algorithm's rule with the
// run starting at a window boundary (synctest's clock starts at midnight UTC 2000-01-01): a
// bucket's burst at once and then one request per 1/rate; a fixed window or sliding log's whole
// quota every window; a sliding window counter's limit at once and then limit-1 per window; and
// never less than the workers' round trips allow.
//
// It is simpler than the sweep's clairvoyant client and meant for a quick look while tuning.
func physical(c cell) time.Duration {
	per := float64(c.window) / float64(c.limit)
	var d time.Duration
	switch c.alg {
	case "token-bucket", "leaky-bucket":
		d = time.Duration(float64(max(int64(c.n)-c.burst, 0)) * per)
	case "fixed-window", "sliding-log":
		d = time.Duration((int64(c.n)+c.limit-1)/c.limit-1) * c.window
	case "sliding-window":
		// It sustains limit-1 per window; a limit of one, one request every other window.
		d = time.Duration(float64(max(int64(c.n)-c.limit, 0)) * float64(c.window) / max(float64(c.limit-1), 0.5))
	}
	// The simulated trip is late by up to a tenth of the round trip each way (uniform): a round
	// trip takes 1.1 RTT on average.
	trip := c.rtt + c.rtt/10
	rounds := (c.n + c.workers - 1) / c.workers
	return max(d, time.Duration(rounds)*trip) + trip
}

var (
	focus = flag.String("focus", "", "print every event of this algorithm's cells")
	trace = flag.Bool("trace", false, "with -focus, trace every answer the declared strategy sees")
)

// TestSimOperatingPoints runs the learner through operating points away from the benchmark's (low
// rates, a 50 ms round trip, lying headers, every limiter kind). Every cell must lose nothing; the
// cells marked goal must also meet the goals (elapsed at most 1.10x the physical limit,
// 429s at most 0.5% of attempts with honest headers and 3% without). The unmarked cells are logged
// with their figures: the learner does not meet the goals there yet (see docs/learner.md, "Where
// it stands").
func TestSimOperatingPoints(t *testing.T) {
	goal := map[int]bool{2: true, 5: true}
	cells := []cell{
		{"token-bucket", 3, time.Second, 3, "none", time.Millisecond, 4, 90},
		{"token-bucket", 200, time.Second, 10, "none", time.Millisecond, 16, 2000},
		{"token-bucket", 200, time.Second, 10, "honest", time.Millisecond, 16, 2000},
		{"sliding-log", 200, time.Second, 200, "honest", 50 * time.Millisecond, 16, 2000},
		{"fixed-window", 20, time.Second, 20, "lying", time.Millisecond, 16, 400},
		{"token-bucket", 2, time.Second, 2, "honest", time.Millisecond, 4, 100},
		{"sliding-window", 50, time.Second, 50, "honest", time.Millisecond, 16, 1000},
		{"leaky-bucket", 5, time.Second, 5, "none", 50 * time.Millisecond, 16, 300},
	}
	for i, c := range cells {
		if c.alg == *focus && *trace {
			learn.SetDebug(func(s string) { t.Log("      ", s) })
		}
		o := runCell(t, c, 1)
		learn.SetDebug(nil)
		ph := physical(c)
		ratio := float64(o.elapsed) / float64(ph)
		if o.lost != 0 {
			t.Errorf("%s %s: %d requests lost", c.alg, c.headers, o.lost)
		}
		bound := 0.03
		if c.headers == "honest" {
			bound = 0.005
		}
		if goal[i] && (ratio > 1.10 || o.share() > bound) {
			t.Errorf("%s %d/%v %s: %.3fx the physical limit and %.2f%% 429s, want at most 1.10x and %.1f%%",
				c.alg, c.limit, c.window, c.headers, ratio, 100*o.share(), 100*bound)
		}
		t.Logf("%s %d/%v b%d %s rtt=%v w=%d n=%d: %.3fx 429s=%.2f%% lost=%d limit=%+v", c.alg, c.limit, c.window, c.burst, c.headers, c.rtt, c.workers, c.n,
			ratio, 100*o.share(), o.lost, o.limit)
		if testing.Verbose() && (len(o.events) < 60 || c.alg == *focus) {
			for _, e := range o.events {
				t.Log("   ", e)
			}
		}
	}
}

var (
	oneOffset = flag.Duration("offset", 0, "with -one, the server's windows begin this far past the clock's aligned ones")
	one       = flag.String("one", "", "run one cell: alg,limit,windowSeconds,headers,rttMs,workers,n[,burst]")
	oneSeed   = flag.Uint64("seed", 1, "with -one, the network jitter's seed")
)

func TestOne(t *testing.T) {
	if *one == "" {
		t.Skip("exploration aid: go test -run TestOne -one leaky-bucket,1,1,none,1,16,300")
	}
	var c cell
	var w, rtt int
	var burst int64
	n, err := fmt.Sscanf(strings.ReplaceAll(*one, ",", " "), "%s %d %d %s %d %d %d %d", &c.alg, &c.limit, &w, &c.headers, &rtt, &c.workers, &c.n, &burst)
	if n < 7 {
		t.Fatal(err)
	}
	if burst == 0 {
		burst = c.limit
	}
	c.window, c.rtt, c.burst = time.Duration(w)*time.Second, time.Duration(rtt)*time.Millisecond, burst
	if *trace {
		learn.SetDebug(func(s string) { t.Log("      ", s) })
		defer learn.SetDebug(nil)
	}
	o := runCellWith(t, c, *oneSeed, func(s *simServer) { s.offset = *oneOffset })
	t.Logf("%.3fx %.2f%% lost=%d %+v", float64(o.elapsed)/float64(physical(c)), 100*o.share(), o.lost, o.limit)
	for _, e := range o.events {
		t.Log("   ", e)
	}
}

// TestAssumedLeakMeasured runs a leaky bucket that speaks Shopify's call limit (its fill of its
// capacity, not its rate: the dialect assumes the plans' 20 s drain) at leak rates from half to a
// hundred times the assumed one, bucket sizes of Shopify's plans and a small one, round trips of
// 1 and 50 ms, and 1 or 16 workers. The learner measures the leak from the levels; every cell must
// lose nothing and meet the goals for a persona that declares its quota, on each of three
// seeds of the network's jitter: at most 1.10x the physical limit and 0.5% throttled attempts.
func TestAssumedLeakMeasured(t *testing.T) {
	for _, capacity := range []int64{10, 40, 400} {
		assumed := float64(capacity) / 20 // per second
		for _, factor := range []float64{0.5, 1, 10, 100} {
			rate := int64(assumed * factor)
			if rate < 1 || rate > 2000 {
				continue
			}
			for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond} {
				for _, workers := range []int{1, 16} {
					// At least 300 requests and ten drains of the bucket.
					n := int(max(300, 10*capacity))
					c := cell{"leaky-bucket", rate, time.Second, capacity, "shopify", rtt, workers, n}
					if float64(n)/float64(rate) > 600 {
						continue // over ten virtual minutes: the slow plans' cells are covered at 1 ms
					}
					for seed := uint64(1); seed <= 3; seed++ {
						o := runCell(t, c, seed)
						ratio := float64(o.elapsed) / float64(physical(c))
						desc := fmt.Sprintf("bucket %d leaking %d/s (%.3gx the assumed), rtt %v, %d workers, %d requests, seed %d",
							capacity, rate, factor, rtt, workers, n, seed)
						if o.lost != 0 || ratio > 1.10 || o.share() > 0.005 {
							t.Errorf("%s: lost %d, %.3fx the physical limit, %.2f%% throttled; want 0, at most 1.10x and 0.5%%",
								desc, o.lost, ratio, 100*o.share())
							for _, e := range o.events {
								t.Log("   ", e)
							}
							continue
						}
						t.Logf("%s: %.3fx, %.2f%% throttled, learned %+v", desc, ratio, 100*o.share(), o.limit)
					}
				}
			}
		}
	}
}

// TestHeaderlessLowRatesFound runs buckets at low rates (3, 5 and 8 a second, burst equal to the
// rate) that say nothing but 429, with round trips of 1 and 50 ms, 4 and 16 workers, 300 requests,
// on three seeds. The search's doubling leaves a bracket of two around the rate; the bisection
// narrows it, so every cell finishes within the 1.10x of the physical limit (the cruise at
// the bracket's lower end took 1.26x at 5/s) and loses nothing. The 429 share is the other
// goal (3%); it is not asserted here: the startup's overshoot and the bisection's refuted tests
// cost 2.6-6.5% of 300 attempts in these cells (docs/learner-measurements.md).
func TestHeaderlessLowRatesFound(t *testing.T) {
	for _, alg := range []string{"token-bucket", "leaky-bucket"} {
		for _, rate := range []int64{3, 5, 8} {
			for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond} {
				for _, workers := range []int{4, 16} {
					c := cell{alg, rate, time.Second, rate, "none", rtt, workers, 300}
					for seed := uint64(1); seed <= 3; seed++ {
						o := runCell(t, c, seed)
						ratio := float64(o.elapsed) / float64(physical(c))
						if o.lost != 0 || ratio > 1.10 {
							t.Errorf("%s %d/s, rtt %v, %d workers, seed %d: lost %d, %.3fx the physical limit (%.2f%% throttled); want 0 and at most 1.10x",
								alg, rate, rtt, workers, seed, o.lost, ratio, 100*o.share())
							for _, e := range o.events {
								t.Log("   ", e)
							}
						}
					}
				}
			}
		}
	}
}
