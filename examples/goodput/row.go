package main

import (
	"fmt"
	"strings"
)

// row is one line of the table: one client through one server setup. Its JSON form is what -json
// prints, one object per line.
type row struct {
	Algorithm string `json:"algorithm"`
	Headers   bool   `json:"headers"`
	Client    string `json:"client"`
	Requests  int    `json:"requests"`
	Workers   int    `json:"workers"`
	// LimitRPS is the server's rate R; InitialBurst what a fresh key admits at once.
	LimitRPS     float64 `json:"limit_rps"`
	InitialBurst int64   `json:"initial_burst"`
	// ElapsedS is the run's wall time; PhysicalS the physical limit (N - initial burst)/R.
	ElapsedS  float64 `json:"elapsed_s"`
	PhysicalS float64 `json:"physical_limit_s"`
	// Ratio is ElapsedS/PhysicalS; null when the physical limit is 0 (the burst admits all).
	Ratio *float64 `json:"ratio"`
	// ServerRequests and ServerDenied are the server's own counts of attempts and 429s;
	// DeniedShare is their quotient (0 with no attempts).
	ServerRequests int64   `json:"server_requests"`
	ServerDenied   int64   `json:"server_denied"`
	DeniedShare    float64 `json:"denied_share"`
	// Retries counts attempts after the first, as the client reports them.
	Retries int64 `json:"retries"`
	// Lost counts requests that did not end in a 2xx response (gave up, failed, or unfinished at
	// the run's timeout).
	Lost int `json:"lost"`
	// TimedOut reports that the run's timeout ended it; Interrupted that a signal did.
	TimedOut    bool `json:"timed_out,omitempty"`
	Interrupted bool `json:"interrupted,omitempty"`
	// LearnedRPS is the pace a steady client keeps for the server after the run.
	LearnedRPS *float64 `json:"learned_rps,omitempty"`
	// Goal is the verdict on issue 4's goal for the steady clients ("met", or "missed: ..." with
	// what missed); empty for the peers.
	Goal string `json:"goal,omitempty"`
}

// goal is what issue 4 asks of a steady client in one setting: elapsed at most maxRatio times the
// physical limit, a share of 429s at most maxDenied, and no request lost.
type goal struct {
	maxRatio  float64
	maxDenied float64
}

// goalFor returns the goal for a client in a header mode, and false for the peers, which have
// none.
func goalFor(kind clientKind, headers bool) (goal, bool) {
	switch {
	case kind == steadyTold:
		return goal{maxRatio: 1.01, maxDenied: 0}, true
	case kind == steadyLearning && headers:
		return goal{maxRatio: 1.03, maxDenied: 0.005}, true
	case kind == steadyLearning:
		return goal{maxRatio: 1.10, maxDenied: 0.03}, true
	}
	return goal{}, false
}

// verdict says whether r meets g: "met", or "missed: " and every part it missed.
func (g goal) verdict(r *row) string {
	var missed []string
	if r.Ratio != nil && *r.Ratio > g.maxRatio {
		missed = append(missed, fmt.Sprintf("%.3f× > %.2f×", *r.Ratio, g.maxRatio))
	}
	if r.DeniedShare > g.maxDenied {
		missed = append(missed, fmt.Sprintf("429s %s > %s", percent(r.DeniedShare), percent(g.maxDenied)))
	}
	if r.Lost > 0 {
		missed = append(missed, fmt.Sprintf("lost %d", r.Lost))
	}
	if len(missed) == 0 {
		return "met"
	}
	return "missed: " + strings.Join(missed, ", ")
}

// missed reports whether the row has a goal and missed it.
func (r *row) missed() bool { return strings.HasPrefix(r.Goal, "missed") }

// percent formats a share as a percentage with two decimals.
func percent(share float64) string { return fmt.Sprintf("%.2f%%", 100*share) }

// headersWord is how the table writes a header mode.
func headersWord(on bool) string {
	if on {
		return headersOn
	}
	return headersOff
}
