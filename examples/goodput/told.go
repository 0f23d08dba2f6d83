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
// bursts and a counter's limit times 1-m, rounded down; windows divided by 1-m).
type toldPace struct {
	// rate (requests per second) and burst are a token bucket: steady-told's pace when neither
	// quotaLimit nor counterLimit is set, and xrate's pace always (x/time/rate has no window
	// primitive).
	rate  float64
	burst int
	// quotaLimit requests per quotaWindow is a window quota (client.WithWindowQuota), steady-told's
	// pace when quotaLimit > 0; 0 and 0 for the algorithms whose policy is not a quota per window.
	quotaLimit  int
	quotaWindow time.Duration
	// counterLimit requests per counterWindow is a sliding window counter on epoch-aligned windows
	// (client.WithWindowCounter), steady-told's pace when counterLimit > 0; 0 and 0 for the
	// algorithms that are not a counter.
	counterLimit  int
	counterWindow time.Duration
}

// toldPaceFor returns the told pace for the server setup s with margin m (0 <= m < 1):
//
//   - token-bucket, leaky-bucket (rate R, burst B): a token bucket at R×(1-m) with burst
//     max(1, ⌊B×(1-m)⌋), as examples/batch -rate R -burst B configures it;
//   - fixed-window, sliding-log (L per W): for steady-told a window quota of L per W/(1-m), as
//     examples/batch -quota L/W configures it; xrate an even pace R×(1-m), burst 1;
//   - sliding-window (a counter, L per W, on windows aligned to the Unix epoch as testserver's
//     are): for steady-told a counter of max(1, ⌊L×(1-m)⌋) per W that mirrors the server's rule
//     on the same windows (client.WithWindowCounter), as examples/batch -counter L/W configures
//     it: the fresh start's burst at once, then as the previous window's weight decays; xrate an
//     even pace (L-1)/W×(1-m), burst 1. A counter sustains L-1 per window, not L (at a window's
//     start the previous window's weight leaves no room for the last one), so an even pace at L/W
//     less a margin under 1/L has no slack at all; and the burst at a fresh start, borrowed from
//     the next window, is out of reach of a client that does not know where the windows start.
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
	case s.algorithm == algorithm.NameSlidingWindow:
		p.counterLimit = margin.Burst(s.limit, m)
		p.counterWindow = s.window
		if s.limit > 1 {
			p.rate = margin.Rate(float64(s.limit-1)/s.window.Seconds(), m)
		}
	}
	return p
}

// usesQuota reports whether steady-told paces with a window quota rather than a token bucket.
func (p toldPace) usesQuota() bool { return p.quotaLimit > 0 }

// usesCounter reports whether steady-told paces with a window counter rather than a token bucket.
func (p toldPace) usesCounter() bool { return p.counterLimit > 0 }

// String describes steady-told's pace for the table's preamble: "199/s burst 9" (a token bucket),
// "200 per 1.005025126s" (a window quota) or "a counter of 199 per 1s" (a window counter).
func (p toldPace) String() string {
	switch {
	case p.usesQuota():
		return fmt.Sprintf("%d per %v", p.quotaLimit, p.quotaWindow)
	case p.usesCounter():
		return fmt.Sprintf("a counter of %d per %v", p.counterLimit, p.counterWindow)
	}
	return p.bucketString()
}

// bucketString describes the token-bucket half of the pace, xrate's: "199/s burst 9".
func (p toldPace) bucketString() string { return fmt.Sprintf("%.6g/s burst %d", p.rate, p.burst) }
