package throttle

import (
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// windowGuess infers the window of a quota that a server declares without one. The most common
// dialect in the wild, X-RateLimit-Limit / X-RateLimit-Remaining / X-RateLimit-Reset (GitHub, many
// gateways), states the quota and the time until it resets but not the window it is counted over.
// Without a window the limiter would know no rate: it would search for one with 429s, and each
// 429's Retry-After would pause the key (a whole second at least). The longest reset seen lately
// is a good guess of the window: a fixed window's reset counts down from the window, a bucket's is
// the time until it is full again (one refill interval for a gateway that refills in steps), and a
// reset in whole seconds rounded up makes every window under a second read as one second, the
// shortest a server can announce that way. A first guess made late in a window is too short (the
// rate too high): the window's end then holds the requests or a 429 cuts the rate, and the next
// window's reset corrects the guess.
//
// Only successes count: a throttle may carry a penalty's reset, longer than any window. A reset
// of ratelimitheader.MaxDelay or more was clamped (a date far off, a unit misread) and says nothing.
// The guess is only ever longer than before, until the limiter forgets what it learned.
type windowGuess struct {
	longest time.Duration
}

// fill sets info.Window to the guess when the server declared a limit but no window, first taking
// the reset of a success (throttled false) into the guess.
func (g *windowGuess) fill(info *ratelimitheader.Info, throttled bool) {
	if info.Window > 0 || info.Limit <= 0 {
		return
	}
	if info.HasReset && !throttled && info.Reset < ratelimitheader.MaxDelay {
		r := max(info.Reset.Round(time.Second), time.Second)
		if info.Reset > r {
			r += time.Second // rounded up: a reset is never shorter than what it says
		}
		g.longest = max(g.longest, r)
	}
	info.Window = g.longest
}
