package main

import (
	"fmt"
	"time"

	"github.com/steadyhttp/steady/internal/margin"
)

// windowCounter is a known sliding window counter (-counter L/W): the server admits a request at
// elapsed time e into an epoch-aligned window iff prev×(W−e) + (cur+1)×W <= L×W, prev and cur
// being the requests it counted in the previous and the current window.
type windowCounter struct {
	limit  int
	window time.Duration
}

// parseCounter parses -counter's value, "L/W" as -quota takes it ("200/1s", "6000/1m"); "" is no
// counter.
func parseCounter(s string) (windowCounter, error) {
	n, d, err := parseLimitWindow("counter", s)
	return windowCounter{limit: n, window: d}, err
}

// set reports whether a counter was given.
func (c windowCounter) set() bool { return c.limit > 0 }

// shrunk is the limit the client keeps with margin m: ⌊L×(1−m)⌋, at least 1 (and at most
// math.MaxInt32, far above any limit an API grants per window), so that a request that network
// jitter delays into the next window, or a clock a little off the server's, still finds room. The
// window stays the server's: the client's windows must start where the server's do.
func (c windowCounter) shrunk(m float64) int { return margin.Burst(int64(c.limit), m) }

// String formats the counter as -counter takes it.
func (c windowCounter) String() string { return fmt.Sprintf("%d/%v", c.limit, c.window) }
