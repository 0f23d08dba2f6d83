package main

import (
	"fmt"
	"math"
	"time"

	"github.com/steadyhttp/steady/internal/margin"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// toldPace is how the clients told the server's published policy pace themselves: what a user who
// read the API's documentation ("200/s with bursts of 10", "200 per second, usable any time in the
// second") would configure, each told quantity shaved by the safety margin m in one way (rates and
// bursts times 1-m, windows divided by 1-m).
type toldPace struct {
	// rate (requests per second) and burst are a token bucket: steady-told's pace when quotaLimit
	// is 0, and xrate's pace always (x/time/rate has no window primitive).
	rate  float64
	burst int
	// quotaLimit requests per quotaWindow is a window quota (client.WithWindowQuota), steady-told's
	// pace when quotaLimit > 0; 0 and 0 for the algorithms whose policy is not a quota per window.
	quotaLimit  int
	quotaWindow time.Duration
}

// toldPaceFor returns the told pace for the server setup s with margin m (0 <= m < 1):
//
//   - token-bucket, leaky-bucket (rate R, burst B): a token bucket at R×(1-m) with burst
//     max(1, ⌊B×(1-m)⌋), as examples/batch -rate R -burst B configures it;
//   - fixed-window, sliding-log (L per W): for steady-told a window quota of L per W/(1-m), as
//     examples/batch -quota L/W configures it; xrate an even pace R×(1-m), burst 1;
//   - sliding-window (a counter, L per W): an even pace (L-1)/W×(1-m), burst 1, for both clients,
//     as examples/batch -rate (L-1)/W configures it. A counter sustains L-1 per window, not L (at
//     a window's start the previous window's weight leaves no room for the last one), so a client
//     at L/W less a margin under 1/L has no slack at all. Its burst at a fresh start is borrowed
//     from the next window, so a client told only L and W cannot use it without knowing the phase
//     of the server's windows.
//
// The window is rounded up to the nanosecond and saturates at the longest time.Duration (which
// client.WithWindowQuota then refuses as too long).
func toldPaceFor(s setup, m float64) toldPace {
	p := toldPace{rate: margin.Rate(s.rate(), m), burst: 1}
	switch {
	case s.bucket():
		p.burst = margin.Burst(s.burst, m)
	case s.algorithm == algorithm.NameFixedWindow || s.algorithm == algorithm.NameSlidingLog:
		p.quotaLimit = int(min(s.limit, math.MaxInt))
		p.quotaWindow = margin.Window(s.window, m)
	case s.algorithm == algorithm.NameSlidingWindow && s.limit > 1:
		p.rate = margin.Rate(float64(s.limit-1)/s.window.Seconds(), m)
	}
	return p
}

// usesQuota reports whether steady-told paces with a window quota rather than a token bucket.
func (p toldPace) usesQuota() bool { return p.quotaLimit > 0 }

// String describes steady-told's pace for the table's preamble: "199/s burst 9" (a token bucket)
// or "200 per 1.005025126s" (a window quota).
func (p toldPace) String() string {
	if p.usesQuota() {
		return fmt.Sprintf("%d per %v", p.quotaLimit, p.quotaWindow)
	}
	return p.bucketString()
}

// bucketString describes the token-bucket half of the pace, xrate's: "199/s burst 9".
func (p toldPace) bucketString() string { return fmt.Sprintf("%.6g/s burst %d", p.rate, p.burst) }
