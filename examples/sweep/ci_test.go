package main

import (
	"fmt"
	"testing"
	"time"
)

// ciGrid is the subset CI runs, steady only: every server kind at 5/s and 2,000/s, round trips of
// 1 ms and 200 ms with 16 workers, honest headers and none, one client. One seed, where the sweep
// judges three: under the race detector a request costs about 175 µs of CPU time, and the 2,000/s
// cells send 20,000 each (ten windows), so three seeds would not fit CI's three minutes on two
// cores.
func ciGrid() grid {
	return grid{
		servers: serverKinds,
		limits:  []limitSpec{limits[1], limits[4]},
		rtts:    []time.Duration{time.Millisecond, 200 * time.Millisecond},
		workers: []int{16},
		headers: []string{headersHonest, headersNone},
		sharing: []int{1},
		kinds:   []string{clientSteady},
		seeds:   1,
	}
}

// ciManyCells are the two cells with ten clients; plain AIMD runs beside steady there (the goal
// compares their warm 429 shares).
var ciManyCells = []cell{
	{Server: "token-bucket", Limit: limits[2], RTT: 50 * time.Millisecond, Workers: 16, Headers: headersNone, Clients: 10},
	{Server: "sliding-window", Limit: limits[3], RTT: time.Millisecond, Workers: 16, Headers: headersHonest, Clients: 10},
}

// stormShare is the share of 429s at which a cell is a retry storm, whatever its goals: as many
// refusals as admissions, the client spending as much of the server's capacity on being refused as
// on its work (each 429 is retried). The goals' 3% is judged separately; the learner this sweep
// replaced drew 58% at 3/s, and real APIs ban clients that keep hammering after a 429.
const stormShare = 0.5

// TestSweepCI runs the CI subset and asserts, in every cell, the invariants: nothing is lost, no
// retry storm, and the clairvoyant client that defines the physical limit draws no 429. The goals
// (elapsed, 429 share, fairness) are judged and logged per cell with their figures, MET or MISSED,
// and counted at the end: steady misses several of them today (issue 10's note lists them), and a
// virtual-time cell moves by a few hundredths from run to run (the bubble's goroutines run in no
// fixed order), so a cell at a bound would make CI fail at random. The full sweep's JSON is the
// judge of the goals.
func TestSweepCI(t *testing.T) {
	if testing.Short() {
		t.Skip("the sweep's CI subset takes a minute or more")
	}
	g := ciGrid()
	// One subtest per physical limit: the cells that differ only in headers share it.
	groups := map[cell][]cell{}
	var keys []cell
	for _, c := range append(g.cells(), ciManyCells...) {
		k := physicalKey(c)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	for _, k := range keys {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			gc := g
			if k.Clients > 1 {
				gc.kinds = []string{clientAIMD, clientSteady}
			}
			phys := physicalOf(t, gc, k)
			for seed, p := range phys {
				if p.denied > 0 || p.lost > 0 {
					t.Errorf("seed %d: the clairvoyant drew %d 429s and lost %d: the physical limit is not exact", seed+1, p.denied, p.lost)
				}
			}
			for _, c := range groups[k] {
				for _, r := range runCell(t, gc, c, phys) {
					if r.Client == clientSteady {
						checkCI(t, c, r)
					}
				}
			}
		})
	}
}

func checkCI(t *testing.T, c cell, r *record) {
	t.Helper()
	figures := fmt.Sprintf("%.3fx, 429s %.2f%%, lost %d, share %.2f, jain %.3f", r.ElapsedOverPhysical, 100*r.ThrottledShare, r.Lost, r.Share, r.Jain)
	if r.ThrottledShareWarm != nil {
		figures += fmt.Sprintf(", warm 429s %.2f%%", 100**r.ThrottledShareWarm)
	}
	if r.Lost > 0 {
		t.Errorf("%v: %d requests lost (%s)", c, r.Lost, figures)
	}
	if r.ThrottledShare >= stormShare {
		t.Errorf("%v: 429s %.2f%% of attempts: a retry storm (%s)", c, 100*r.ThrottledShare, figures)
	}
	t.Logf("%v: %s (%s)", c, r.verdict(), figures)
}
