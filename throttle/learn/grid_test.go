package learn_test

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

var (
	grid     = flag.String("grid", "", "run a grid of operating points: comma-separated algorithms, or all")
	gridRuns = flag.Int("grid-runs", 1, "with -grid, run the grid this many times and average the summary")
)

// TestGrid is an exploration aid (skipped unless -grid is given): it runs every algorithm at
// several rates, round trips and header modes, 16 workers, and prints the cells that miss the
// issue's goals. The sweep (examples/sweep) is the proof; this is the quick look while tuning.
func TestGrid(t *testing.T) {
	if *grid == "" {
		t.Skip("exploration aid: go test -run TestGrid -grid all")
	}
	algs := []string{"token-bucket", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window"}
	if *grid != "all" {
		algs = strings.Split(*grid, ",")
	}
	type rl struct {
		limit  int64
		window time.Duration
	}
	rates := []rl{{1, time.Second}, {5, time.Second}, {50, time.Second}, {200, time.Second}, {100, time.Minute}}
	var lines []string
	met, total := 0, 0
	// Per header mode, over every run: cells met, each goal missed, and the sums of the ratios and
	// the 429 shares (virtual time is not deterministic where goroutines wake at one instant, so
	// a single run of a cell is one draw: -grid-runs averages several).
	type tally struct {
		met, slow, throttled, n int
		ratio, share            float64
	}
	tallies := map[string]*tally{}
	for run := 0; run < *gridRuns; run++ {
		for _, a := range algs {
			for _, r := range rates {
				for _, h := range []string{"none", "honest", "lying"} {
					for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond} {
						burst := r.limit
						n := int(max(300, 10*r.limit))
						c := cell{a, r.limit, r.window, burst, h, rtt, 16, n}
						o := runCell(t, c, 1)
						ratio := float64(o.elapsed) / float64(physical(c))
						bound := 0.03
						if h == "honest" {
							bound = 0.005
						}
						ok := o.lost == 0 && ratio <= 1.10 && o.share() <= bound
						tl := tallies[h]
						if tl == nil {
							tl = &tally{}
							tallies[h] = tl
						}
						tl.n++
						tl.ratio += ratio
						tl.share += o.share()
						if ratio > 1.10 {
							tl.slow++
						}
						if o.share() > bound {
							tl.throttled++
						}
						total++
						if ok {
							met++
							tl.met++
						}
						mark := "ok  "
						if !ok {
							mark = "MISS"
						}
						lines = append(lines, fmt.Sprintf("%s %-14s %4d/%-4v %-6s rtt=%-5v %6.3fx %6.2f%% lost=%d %s/%s",
							mark, a, r.limit, r.window, h, rtt, ratio, 100*o.share(), o.lost, o.limit.Strategy, o.limit.State))
					}
				}
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("met %d of %d cells (%d runs)", met, total, *gridRuns)
	for _, h := range []string{"none", "honest", "lying"} {
		if tl := tallies[h]; tl != nil {
			k := float64(*gridRuns)
			t.Logf("headers %-6s per run: met %.1f of %d, over 1.10x %.1f, over the 429 goal %.1f; mean %.3fx, mean 429 share %.2f%%",
				h, float64(tl.met)/k, tl.n / *gridRuns, float64(tl.slow)/k, float64(tl.throttled)/k, tl.ratio/float64(tl.n), 100*tl.share/float64(tl.n))
		}
	}
}
