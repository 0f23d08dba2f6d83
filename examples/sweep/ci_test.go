package main

import (
	"fmt"
	"testing"
	"time"
)

// ciGrid is the subset CI runs, steady only: every server kind at 5/s and 2,000/s, round trips of
// 1 ms and 200 ms with 16 workers, honest headers and none, one client; three seeds.
func ciGrid() grid {
	return grid{
		servers: serverKinds,
		limits:  []limitSpec{limits[1], limits[4]},
		rtts:    []time.Duration{time.Millisecond, 200 * time.Millisecond},
		workers: []int{16},
		headers: []string{headersHonest, headersNone},
		sharing: []int{1},
		kinds:   []string{clientSteady},
		seeds:   3,
	}
}

// ciManyCells are the two cells with ten clients; plain AIMD runs beside steady there (the goal
// compares their warm 429 shares).
var ciManyCells = []cell{
	{Server: "token-bucket", Limit: limits[2], RTT: 50 * time.Millisecond, Workers: 16, Headers: headersNone, Clients: 10},
	{Server: "sliding-window", Limit: limits[3], RTT: time.Millisecond, Workers: 16, Headers: headersHonest, Clients: 10},
}

// knownMisses are the CI cells where steady does not meet every goal yet, by cell (String), with
// the figures of the run that listed them. They are still run: nothing may be lost there, and
// the 429s must stay under half of the attempts (a client drawing more 429s than successes is
// storming the server); the goals' figures are logged. A known miss that meets its goals is logged
// too, so the list can shrink.
var knownMisses = map[string]string{}

// TestSweepCI runs the CI subset and asserts, in every cell, that nothing is lost and, outside
// the known misses, every goal.
func TestSweepCI(t *testing.T) {
	if testing.Short() {
		t.Skip("the sweep's CI subset takes a minute or more")
	}
	g := ciGrid()
	cells := g.cells()
	for _, c := range ciManyCells {
		cells = append(cells, c)
	}
	for _, c := range cells {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			gc := g
			if c.Clients > 1 {
				gc.kinds = []string{clientAIMD, clientSteady}
			}
			phys := physicalOf(t, gc, c)
			for seed, p := range phys {
				if p.denied > 0 || p.lost > 0 {
					t.Errorf("seed %d: the clairvoyant drew %d 429s and lost %d: the physical limit is not exact", seed+1, p.denied, p.lost)
				}
			}
			for _, r := range runCell(t, gc, c, phys) {
				if r.Client == clientSteady {
					checkCI(t, c, r)
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
	if _, known := knownMisses[c.String()]; known {
		if r.ThrottledShare >= 0.5 {
			t.Errorf("%v (known miss): 429s %.2f%% of attempts, a retry storm (%s)", c, 100*r.ThrottledShare, figures)
		}
		if r.met() {
			t.Logf("%v: known miss now meets every goal (%s): remove it from knownMisses", c, figures)
		} else {
			t.Logf("%v: KNOWN MISS: %s (%s)", c, r.verdict(), figures)
		}
		return
	}
	if !r.met() {
		t.Errorf("%v: %s (%s)", c, r.verdict(), figures)
	}
}
