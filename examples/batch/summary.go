package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// summary is everything a run reports.
type summary struct {
	requests  int
	succeeded int
	failed    int
	throttled int64 // 429 and 503 responses the client saw
	retries   int64
	elapsed   time.Duration
	failures  []reasonCount
	cancelled bool
	// skipped is how many requests the output recorded as done already (-resume).
	skipped int
	// output is the -output file ("" for none), records how many records this run appended to it.
	output  string
	records int
	pace    pace
	server  *serverReport // nil with -url
	shared  *sharedReport // nil without -shared
}

// pace is how the client was paced.
type pace struct {
	known  float64 // the rate given with -rate, 0 when not known
	paced  float64 // the rate the client paced at: known less the margin
	margin float64
	burst  int
	// quota is the quota given with -quota (zero when none), window the window the client kept.
	quota  quota
	window time.Duration
	// counter is the counter given with -counter (zero when none), counterLimit the limit the
	// client kept.
	counter      windowCounter
	counterLimit int
	shared       bool // paced through a quota shared in Redis (-shared)
	// learned is the rate the default adaptive pace had learned at the end, 0 when not learning.
	learned float64
}

// rate is the achieved rate: succeeded requests per second of the run.
func (s *summary) rate() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.succeeded) / s.elapsed.Seconds()
}

// physicalLimit is the least time in which any client gets s.requests requests through the
// embedded server's limit: what exceeds its initial allowance, at its rate.
func (s *summary) physicalLimit() time.Duration {
	if s.server == nil || s.server.limitRPS <= 0 {
		return 0
	}
	rest := max(0, int64(s.requests)-s.server.headStart())
	return time.Duration(float64(rest) / s.server.limitRPS * float64(time.Second))
}

// writeText writes the human-readable summary.
func (s *summary) writeText(w io.Writer) error {
	_, err := io.WriteString(w, strings.Join(s.lines(), "\n")+"\n")
	return err
}

// lines are the summary's lines: the counts, the pace, the failure reasons, and for the embedded
// server the comparison with its limit.
func (s *summary) lines() []string {
	out := []string{
		fmt.Sprintf("requests:            %d", s.requests),
		fmt.Sprintf("succeeded:           %d", s.succeeded),
		fmt.Sprintf("failed:              %d", s.failed),
		fmt.Sprintf("throttled responses: %d", s.throttled),
		fmt.Sprintf("retries:             %d", s.retries),
		fmt.Sprintf("elapsed:             %.2fs", s.elapsed.Seconds()),
		fmt.Sprintf("achieved rate:       %.1f req/s", s.rate()),
		s.paceLine(),
	}
	if s.skipped > 0 {
		out = append(out, fmt.Sprintf("skipped:             %d (done in an earlier run, as %s records)", s.skipped, s.output))
	}
	if s.output != "" {
		out = append(out, fmt.Sprintf("results:             %d records appended to %s", s.records, s.output))
	}
	if len(s.failures) > 0 {
		out = append(out, "failures:")
		for _, f := range s.failures {
			out = append(out, fmt.Sprintf("  %6d  %s", f.Count, f.Reason))
		}
	}
	if s.cancelled {
		line := "interrupted: requests that had not finished are counted as failed (cancelled)"
		if s.output != "" {
			line += "; the same command with -resume sends them"
		}
		out = append(out, line)
	}
	if s.server != nil {
		out = append(out, s.serverLines()...)
	}
	return out
}

// quotaString is the -quota given, "" when none.
func (p pace) quotaString() string {
	if !p.quota.set() {
		return ""
	}
	return p.quota.String()
}

// counterString is the -counter given, "" when none.
func (p pace) counterString() string {
	if !p.counter.set() {
		return ""
	}
	return p.counter.String()
}

// paceLine says how the client was paced.
func (s *summary) paceLine() string {
	if s.pace.known > 0 {
		return fmt.Sprintf("pace:                told %g req/s, paced at %.4g req/s (margin %g%%), burst %d",
			s.pace.known, s.pace.paced, 100*s.pace.margin, s.pace.burst)
	}
	if s.pace.quota.set() {
		return fmt.Sprintf("pace:                told a quota of %s: at most %d in any %v (margin %g%%)",
			s.pace.quota, s.pace.quota.limit, s.pace.window, 100*s.pace.margin)
	}
	if s.pace.counter.set() {
		return fmt.Sprintf("pace:                told a sliding window counter of %s: its rule with %d per %v on epoch-aligned windows (margin %g%%)",
			s.pace.counter, s.pace.counterLimit, s.pace.counter.window, 100*s.pace.margin)
	}
	if s.pace.shared {
		return "pace:                not told: learned together by the processes sharing the quota (-shared)"
	}
	if s.pace.learned > 0 {
		return fmt.Sprintf("pace:                not told: learned %.4g req/s from the server's responses (client.New's default)", s.pace.learned)
	}
	return "pace:                not told (client.New's default)"
}

// serverLines compare the run with the embedded server's limit.
func (s *summary) serverLines() []string {
	r := s.server
	phys := s.physicalLimit()
	line := fmt.Sprintf("vs server:           %.1f req/s achieved = %.1f%% of its limit %g req/s (%s, burst %d); ",
		s.rate(), 100*s.rate()/r.limitRPS, r.limitRPS, r.algorithm, r.allowance)
	switch {
	case s.cancelled:
		line += "elapsed not compared: the run was interrupted"
	case phys > 0:
		line += fmt.Sprintf("elapsed %.2fs = %.3f x the physical limit %.2fs ((%d-%d)/%g)",
			s.elapsed.Seconds(), s.elapsed.Seconds()/phys.Seconds(), phys.Seconds(), s.requests, r.headStart(), r.limitRPS)
	default:
		line += fmt.Sprintf("all %d requests fit in its burst of %d", s.requests, r.allowance)
	}
	return []string{
		fmt.Sprintf("server saw:          %d requests, %d throttled", r.requests, r.throttled),
		line,
	}
}

// jsonSummary is the -json line. The first seven keys are always present.
type jsonSummary struct {
	Requests           int           `json:"requests"`
	Succeeded          int           `json:"succeeded"`
	Failed             int           `json:"failed"`
	ThrottledResponses int64         `json:"throttled_responses"`
	Retries            int64         `json:"retries"`
	ElapsedS           float64       `json:"elapsed_s"`
	RateRPS            float64       `json:"rate_rps"`
	Cancelled          bool          `json:"cancelled,omitempty"`
	Skipped            int           `json:"skipped,omitempty"`
	Output             string        `json:"output,omitempty"`
	Records            *int          `json:"records,omitempty"`
	FailureReasons     []reasonCount `json:"failure_reasons,omitempty"`
	KnownRateRPS       float64       `json:"known_rate_rps,omitempty"`
	KnownQuota         string        `json:"known_quota,omitempty"`
	KnownCounter       string        `json:"known_counter,omitempty"`
	PacedRateRPS       float64       `json:"paced_rate_rps,omitempty"`
	LearnedRateRPS     float64       `json:"learned_rate_rps,omitempty"`
	ServerLimitRPS     float64       `json:"server_limit_rps,omitempty"`
	PhysicalLimitS     *float64      `json:"physical_limit_s,omitempty"`
	ServerRequests     *int64        `json:"server_requests,omitempty"`
	ServerThrottled    *int64        `json:"server_throttled,omitempty"`
	Shared             *sharedReport `json:"shared,omitempty"`
}

// writeJSON writes the summary as one JSON line.
func (s *summary) writeJSON(w io.Writer) error {
	j := jsonSummary{
		Requests: s.requests, Succeeded: s.succeeded, Failed: s.failed,
		ThrottledResponses: s.throttled, Retries: s.retries,
		ElapsedS: round(s.elapsed.Seconds(), 6), RateRPS: round(s.rate(), 2),
		Cancelled: s.cancelled, FailureReasons: s.failures, KnownRateRPS: s.pace.known, KnownQuota: s.pace.quotaString(),
		KnownCounter: s.pace.counterString(),
		PacedRateRPS: s.pace.paced, LearnedRateRPS: round(s.pace.learned, 2),
		Skipped: s.skipped, Output: s.output, Shared: s.shared,
	}
	if s.output != "" {
		j.Records = &s.records
	}
	if r := s.server; r != nil {
		phys := round(s.physicalLimit().Seconds(), 4)
		j.ServerLimitRPS, j.PhysicalLimitS = r.limitRPS, &phys
		j.ServerRequests, j.ServerThrottled = &r.requests, &r.throttled
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// round rounds x to the given number of decimals.
func round(x float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(x*p) / p
}
