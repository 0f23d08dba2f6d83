package main

import (
	"fmt"
	"math"
	"strings"
)

// Goals of issue 10, section 3, and of issue 11 for the dialects. A 429 here is any throttled
// answer: a 429, or the persona's own throttle status (GitHub's 403).
const (
	goalRatioFew     = 1.10  // elapsed over physical, one or two clients
	goalRatioMany    = 1.25  // elapsed over physical, many clients
	goal429None      = 0.03  // 429 share without headers, with lying ones, and with a dialect that declares no quota (Stripe, none)
	goal429Honest    = 0.005 // 429 share with honest headers in a dialect that declares its quota
	goalShareBand    = 0.20  // each client's share within ±20% of the fair share
	goal429Warm      = 0.03  // many clients: 429 share after the warm-up
	goalWarmOverAIMD = 0.25  // many clients: at most a quarter of plain AIMD's warm 429 share
	goalJain         = 0.90  // many clients: Jain's fairness index
)

// record is one cell's figures for one client kind, the worst over its seeds: the largest elapsed
// over physical, 429 shares and losses, the smallest share and Jain index. Its JSON form is the
// sweep's -json line.
type record struct {
	Client              string   `json:"client"`
	Server              string   `json:"server"`
	Limit               string   `json:"limit"`
	RTTms               float64  `json:"rtt_ms"`
	Workers             int      `json:"workers"`
	Headers             string   `json:"headers"`
	Dialect             string   `json:"dialect"` // "" for none and lying headers
	Clients             int      `json:"clients"`
	ElapsedOverPhysical float64  `json:"elapsed_over_physical"`
	ThrottledShare      float64  `json:"throttled_share"`
	Lost                int64    `json:"lost"`
	Share               float64  `json:"share"`
	Jain                float64  `json:"jain"`
	ThrottledShareWarm  *float64 `json:"throttled_share_warm"`

	cell      cell
	maxShare  float64 // the largest client's share of the fair share (worst seed)
	physical0 int64   // 429s the clairvoyant drew (must be 0: the model's check)
	seeds     int
	missed    []string // the goals missed, empty when met
}

// fairness returns the smallest and largest client's admissions over the fair share (their mean)
// and Jain's index (Σx)²/(n·Σx²); 1, 1, 1 for one client or no admissions.
func fairness(admitted []int64) (minShare, maxShare, jain float64) {
	if len(admitted) <= 1 {
		return 1, 1, 1
	}
	var sum, sq float64
	minShare, maxShare = math.Inf(1), 0
	for _, a := range admitted {
		sum += float64(a)
		sq += float64(a) * float64(a)
	}
	if sum == 0 {
		return 1, 1, 1
	}
	fair := sum / float64(len(admitted))
	for _, a := range admitted {
		minShare = min(minShare, float64(a)/fair)
		maxShare = max(maxShare, float64(a)/fair)
	}
	return minShare, maxShare, sum * sum / (float64(len(admitted)) * sq)
}

// add folds one seed's outcome into r (worst figures win).
func (r *record) add(o outcome, physical outcome) {
	ratio := float64(o.elapsed) / float64(max(physical.elapsed, 1))
	minS, maxS, jain := fairness(o.admitted)
	if r.seeds == 0 {
		r.ElapsedOverPhysical, r.Share, r.maxShare, r.Jain = ratio, minS, maxS, jain
	}
	r.seeds++
	r.ElapsedOverPhysical = max(r.ElapsedOverPhysical, ratio)
	r.ThrottledShare = max(r.ThrottledShare, o.throttledShare())
	r.Lost = max(r.Lost, o.lost)
	r.Share = min(r.Share, minS)
	r.maxShare = max(r.maxShare, maxS)
	r.Jain = min(r.Jain, jain)
	r.physical0 = max(r.physical0, physical.denied)
	if r.Clients >= manyClients {
		w := o.warmShare()
		if r.ThrottledShareWarm == nil || w > *r.ThrottledShareWarm {
			r.ThrottledShareWarm = &w
		}
	}
}

// judge sets r.missed from the goals; aimdWarm is plain AIMD's warm 429 share on the same cell
// (many clients; negative when not run).
func (r *record) judge(aimdWarm float64) {
	r.missed = nil
	miss := func(format string, args ...any) { r.missed = append(r.missed, fmt.Sprintf(format, args...)) }
	if r.Lost > 0 {
		miss("lost %d", r.Lost)
	}
	if r.Clients >= manyClients {
		if r.ElapsedOverPhysical > goalRatioMany {
			miss("%.3fx > %.2fx", r.ElapsedOverPhysical, goalRatioMany)
		}
		w := *r.ThrottledShareWarm
		if w > goal429Warm {
			miss("warm 429s %.2f%% > %.0f%%", 100*w, 100*goal429Warm)
		}
		if aimdWarm >= 0 && w > goalWarmOverAIMD*aimdWarm {
			miss("warm 429s %.2f%% > 1/4 of AIMD's %.2f%%", 100*w, 100*aimdWarm)
		}
		if r.Jain < goalJain {
			miss("jain %.3f < %.2f", r.Jain, goalJain)
		}
		return
	}
	if r.ElapsedOverPhysical > goalRatioFew {
		miss("%.3fx > %.2fx", r.ElapsedOverPhysical, goalRatioFew)
	}
	if bound := r.throttledBound(); r.ThrottledShare > bound {
		miss("429s %.2f%% > %.1f%%", 100*r.ThrottledShare, 100*bound)
	}
	if r.Share < 1-goalShareBand || r.maxShare > 1+goalShareBand {
		miss("share %.2f-%.2f outside 1±%.1f", r.Share, r.maxShare, goalShareBand)
	}
}

// throttledBound is the largest throttled share the goals allow one or two clients on r's cell:
// goal429Honest where the server declares its quota (honest headers in a dialect that declares
// one), goal429None elsewhere.
func (r *record) throttledBound() float64 {
	if declaresQuota(r.Headers, r.Dialect) {
		return goal429Honest
	}
	return goal429None
}

func (r *record) met() bool { return len(r.missed) == 0 }

// badness orders missed cells for the summary's worst cell: a loss first, then the goal missed by
// the largest factor.
func (r *record) badness() float64 {
	b := 0.0
	if r.Lost > 0 {
		b = 1000 + float64(r.Lost)
	}
	ratioGoal, bound := goalRatioFew, r.throttledBound()
	if r.Clients >= manyClients {
		ratioGoal, bound = goalRatioMany, goal429Warm
	}
	share := r.ThrottledShare
	if r.ThrottledShareWarm != nil {
		share = *r.ThrottledShareWarm
	}
	return max(b, r.ElapsedOverPhysical/ratioGoal, share/bound)
}

func (r *record) verdict() string {
	if r.met() {
		return "met"
	}
	return "MISSED: " + strings.Join(r.missed, "; ")
}
