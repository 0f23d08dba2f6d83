package redisthrottle

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

var sharedGrid = flag.String("shared-grid", "", "run the shared learner's grid of operating points: none, honest or all (header modes)")

// TestSharedGrid is an exploration aid, not a gate: three processes of five workers each, sharing
// one learned quota, against every server algorithm (buckets with a burst of 5 and of 1) at 5 to
// 1,000 requests a second, round trips
// of 1, 20 and 100 ms (cells where 15 workers cannot keep twice the limit in flight are left out),
// with and without RateLimit headers, three jitter seeds a cell, judged on the worst. It prints
// each cell's elapsed over the physical limit and its 429 share against the goals (1.10x
// and 3% without headers, 1.03x and 0.5% with them), and the cells met:
//
//	cd throttle/redisthrottle && go test -run TestSharedGrid -v -args -shared-grid all
func TestSharedGrid(t *testing.T) {
	modes := map[string][]bool{"none": {false}, "honest": {true}, "all": {false, true}}[*sharedGrid]
	if modes == nil {
		t.Skip("exploration aid: -shared-grid none|honest|all")
	}
	url := redisURL(t)
	for _, headers := range modes {
		maxRatio, maxShare := 1.10, 0.03
		if headers {
			maxRatio, maxShare = 1.03, 0.005
		}
		cells, met, worst, sum := 0, 0, 0.0, 0.0
		for _, alg := range algorithm.Names() {
			bursts := []int64{0} // windows: the limit
			if alg == algorithm.NameTokenBucket || alg == algorithm.NameLeakyBucket {
				bursts = []int64{5, 1} // and a bucket with no burst at all (nginx's limit_req without burst)
			}
			for _, burst := range bursts {
				for _, limit := range []int64{5, 20, 50, 200, 1000} {
					for _, rtt := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
						c := simConfig{alg: alg, limit: limit, window: time.Second, headers: headers, burst: burst,
							processes: 3, workers: 5, n: max(int(limit)*15, 300), rtt: rtt, jitter: rtt / 2}
						if float64(c.processes*c.workers)/rtt.Seconds() < 2*float64(limit) {
							continue
						}
						var r simResult
						for seed := range uint64(3) {
							c.seed = seed
							x := runSim(t, url, fmt.Sprintf("grid-%s-%d-%d-%v-%v-%d", alg, c.burst, limit, rtt, headers, seed), c)
							// the worst seed: the larger excess over either goal
							if seed == 0 || max(x.ratio(c)/maxRatio, x.share()/maxShare) > max(r.ratio(c)/maxRatio, r.share()/maxShare) {
								r = x
							}
						}
						ok := r.lost == 0 && r.ratio(c) <= maxRatio && r.share() <= maxShare
						cells++
						if ok {
							met++
						}
						worst, sum = max(worst, r.ratio(c)), sum+r.ratio(c)
						t.Logf("headers=%-5v %-15s burst %4d %4d/s rtt %5v  %.3fx  429s %5.2f%%  lost %d  met %v", headers, alg, c.burst, limit, rtt, r.ratio(c), 100*r.share(), r.lost, ok)
					}
				}
			}
		}
		t.Logf("headers=%v: %d of %d cells met; elapsed over the physical limit: mean %.3fx, worst %.3fx", headers, met, cells, sum/float64(cells), worst)
	}
}

var (
	sharedOne   = flag.String("shared-one", "", "run one shared operating point: alg,limit,windowSeconds,headers,rttMs,processes,workers,n[,burst]")
	sharedTrace = flag.Bool("shared-trace", false, "with -shared-one: log each arrival, throttle and cut")
)

// TestSharedOne is an exploration aid, not a gate: it runs the simulation at the operating point
// -shared-one names, for three jitter seeds, and prints each seed's elapsed over the physical
// limit, its 429 share and the pace each process ended at (-shared-trace logs every arrival,
// throttle and cut):
//
//	cd throttle/redisthrottle && go test -run TestSharedOne -v -args -shared-one sliding-window,3,1,true,1,1,20,60
func TestSharedOne(t *testing.T) {
	if *sharedOne == "" {
		t.Skip("exploration aid: -shared-one alg,limit,windowSeconds,headers,rttMs,processes,workers,n[,burst]")
	}
	var c simConfig
	var windowS, rttMs float64
	var burst int64
	n, err := fmt.Sscanf(strings.ReplaceAll(*sharedOne, ",", " "), "%s %d %g %t %g %d %d %d %d",
		&c.alg, &c.limit, &windowS, &c.headers, &rttMs, &c.processes, &c.workers, &c.n, &burst)
	if n < 8 {
		t.Fatalf("-shared-one %q: %v", *sharedOne, err)
	}
	c.window = time.Duration(windowS * float64(time.Second))
	c.rtt = time.Duration(rttMs * float64(time.Millisecond))
	c.jitter, c.burst = c.rtt/2, burst
	if *sharedTrace {
		simTrace = func(at time.Duration, what string, rate float64) {
			t.Logf("%10.6fs %-6s %.3f", at.Seconds(), what, rate)
		}
		defer func() { simTrace = nil }()
		c.opts = append(c.opts, WithLogger(slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{
			Level: slog.LevelDebug,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))))
	}
	url := redisURL(t)
	for seed := range uint64(3) {
		c.seed = seed
		r := runSim(t, url, fmt.Sprintf("one-%s-%d", strings.ReplaceAll(*sharedOne, ",", "-"), seed), c)
		t.Logf("seed %d: %.3fx  429s %5.2f%% (%d of %d)  lost %d  rates %.2f", seed, r.ratio(c), 100*r.share(), r.throttled, r.attempts, r.lost, r.rates)
	}
}

// tWriter writes a test's log lines.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
