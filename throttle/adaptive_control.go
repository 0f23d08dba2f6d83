package throttle

import (
	"math"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// The control law's constants (rates in requests per second, times in nanoseconds).
const (
	// slowStartDoubling is the shortest time in which the rate doubles before the first throttle
	// (cold start); it is at least two round trips, so that feedback can arrive in between.
	slowStartDoubling = int64(100 * time.Millisecond)
	// recoverTau is the time constant of the return to just under the estimated server rate after
	// a cut: about 63% of the gap is closed in recoverTau worth of successes.
	recoverTau = 0.3
	// probeRate is how fast, as a fraction of the estimated server rate per second, the rate
	// creeps above the estimate between throttles, looking for more.
	probeRate = 0.01
	// recoverMargin is how far below the pace that drew the last throttle the rate recovers to.
	recoverMargin = 0.02
	// cutMargin is how far below the measured success rate a cut sets the rate.
	cutMargin = 0.02
	// cutMin and cutMax bound a cut: the rate is multiplied by at least cutMin and at most cutMax.
	cutMin, cutMax = 0.5, 0.9
	// blackoutCut multiplies the rate on every further cut of a blackout.
	blackoutCut = 0.5
	// minMeasured is how many successes in the last second make the measured rate trustworthy.
	minMeasured = 8
)

type phase uint8

const (
	phaseCold      phase = iota // nothing observed yet: the initial rate
	phaseSlowStart              // no throttle and no declared rate yet: ramping up exponentially
	phaseSteady                 // after a throttle or a declared rate: hold just under the estimate
)

// control is the state of an Adaptive limiter's control law. Every method takes the current time
// t on the limiter's integer clock; the limiter's mutex is held.
type control struct {
	cfg *adaptiveConfig

	phase phase
	rate  float64 // the rate the law settled on (before the declared rate's ceiling)
	pace  float64 // the rate the pacer keeps: rate, capped by the declared rate, raised by a spread

	policy    float64 // declared rate, clamped; 0 when none
	policyWin int64   // declared window in ns; 0 when unknown
	est       float64 // success rate measured at the last throttle; 0 before any
	wmax      float64 // the pace that drew the last throttle: the server's rate is below it

	spread      float64 // rate at which the remaining quota can be spread until spreadUntil
	spreadUntil int64
	holdUntil   int64 // no request before this (nothing left until the reset)

	hasCut  bool
	lastCut int64
	// run counts the cuts since the last success: more than one means throttles keep coming with
	// nothing admitted in between (a blackout, such as an exhausted window).
	run int

	srtt       int64 // smoothed round-trip time, 0 before the first sample
	lastActive int64

	sent                       int64
	successes, throttles, cuts int64
}

func (c *control) init(cfg *adaptiveConfig) {
	*c = control{cfg: cfg, phase: phaseCold, rate: cfg.initialRate}
	c.updatePace(0)
}

// sendHorizon is how old a remembered send may be and still be matched with a response.
func (c *control) sendHorizon() int64 {
	return max(int64(10*time.Second), 8*c.srtt)
}

func (c *control) observeRTT(d int64) {
	if d < 0 {
		return
	}
	if c.srtt == 0 {
		c.srtt = d
		return
	}
	c.srtt += (d - c.srtt) / 8
}

// ceiling is the highest rate the law may take: the declared rate less the headroom, or the
// configured maximum.
func (c *control) ceiling() float64 {
	if c.policy > 0 {
		return c.policy * (1 - c.cfg.headroom)
	}
	return c.cfg.maxRate
}

// observe applies one response to the law. sent is when its request left (estimated), inflight
// how many requests are still out, succ the success meter (already counting this response).
func (c *control) observe(t, sent int64, throttled bool, info ratelimitheader.Info, inflight int, succ *meter) {
	c.learnPolicy(info)
	if c.phase == phaseCold {
		c.phase = phaseSlowStart
		if c.policy > 0 {
			c.phase = phaseSteady
			c.rate = c.ceiling()
		}
	}
	exhausted := false
	if info.HasRemaining {
		exhausted = c.learnRemaining(t, info, inflight)
	}
	if throttled {
		c.throttles++
		c.cut(t, sent, succ)
	} else {
		c.successes++
		c.admitted(t, succ)
		if exhausted {
			c.cut(t, sent, succ)
		} else {
			c.grow(t)
		}
	}
	c.updatePace(t)
}

// learnPolicy takes the server's declared rate from RateLimit-Policy or X-RateLimit-Limit with a
// window, clamped to the bounds (a claim above the maximum is read as the maximum).
func (c *control) learnPolicy(info ratelimitheader.Info) {
	if info.Limit <= 0 || info.Window <= 0 {
		return
	}
	r := float64(info.Limit) / info.Window.Seconds()
	if !(r > 0) {
		return
	}
	// A sliding window counter admits Limit-1 per window in the steady state, not Limit: pace so
	// that every algorithm keeps up (for Limit 200 per second, 199/s).
	if info.Limit > 1 {
		r = float64(info.Limit-1) / info.Window.Seconds()
	}
	c.policy = min(max(r, 1/ratelimitheader.MaxDelay.Seconds()), c.cfg.maxRate)
	c.policyWin = int64(info.Window)
}

// learnRemaining applies the remaining quota and its reset. It reports whether nothing is left for
// the requests still to come (the response said fewer remain than requests are in flight).
func (c *control) learnRemaining(t int64, info ratelimitheader.Info, inflight int) bool {
	left := info.Remaining - int64(inflight)
	if left <= 0 {
		if info.HasReset && info.Reset > 0 {
			hold := int64(info.Reset)
			if c.policyWin > 0 {
				hold = min(hold, c.policyWin)
			}
			c.holdUntil = max(c.holdUntil, t+hold)
		}
		return true
	}
	if info.HasReset && info.Reset > 0 {
		s := float64(left) / info.Reset.Seconds()
		c.spread = min(s, c.cfg.maxRate)
		c.spreadUntil = t + int64(info.Reset)
	}
	return false
}

// cut lowers the rate after a throttle, once per epoch: a throttle for a request sent before the
// last cut belongs to the same epoch.
func (c *control) cut(t, sent int64, succ *meter) {
	if c.hasCut && sent < c.lastCut {
		return
	}
	cur := c.pace
	c.phase = phaseSteady
	c.hasCut, c.lastCut = true, t
	c.cuts++
	c.run++
	if c.run > 1 {
		// Nothing was admitted since the last cut: the server is not admitting at all for now.
		// Back off fast, so that waiting out the blackout costs a handful of throttles.
		c.rate = max(cur*blackoutCut, c.cfg.minRate)
		return
	}
	measured, n := succ.rate(t)
	c.wmax = cur
	target := cur * cutMax
	if n >= minMeasured {
		target = min(target, measured*(1-cutMargin))
		c.est = measured
	} else {
		c.est = cur * cutMax
	}
	c.rate = max(target, cur*cutMin, c.cfg.minRate)
}

// admitted notes a success after a run of cuts.
func (c *control) admitted(t int64, succ *meter) {
	if c.run > 1 {
		// A blackout is over. The successes of the last second are what the server admitted while
		// we were asking for more: an upper bound of its rate that is tighter than the pace that
		// drew the first throttle.
		if measured, n := succ.peak(t); n >= minMeasured && measured < c.wmax {
			c.wmax, c.est = measured, measured
		}
	}
	c.run = 0
}

// grow raises the rate after a success.
func (c *control) grow(t int64) {
	ceil := c.ceiling()
	switch c.phase {
	case phaseSlowStart:
		dbl := max(slowStartDoubling, 2*c.srtt)
		// Per success the rate grows by 2^(1/(rate*doubling)): at full use it doubles per doubling
		// time; when the caller sends less than the pace, it grows less.
		c.rate *= math.Exp2(1 / (c.rate * float64(dbl) / 1e9))
		if c.est > 0 && c.rate >= c.est*(1-c.cfg.headroom) {
			c.rate = c.est * (1 - c.cfg.headroom)
			c.phase = phaseSteady
		}
	case phaseSteady:
		target := ceil
		if c.wmax > 0 {
			target = min(target, c.wmax*(1-recoverMargin))
		}
		if c.rate < target {
			c.rate += (target - c.rate) * min(1, 1/(c.rate*recoverTau))
			if target-c.rate < target*1e-3 {
				c.rate = target
			}
		} else if c.wmax > 0 {
			c.rate += c.wmax * probeRate / c.rate
		}
	}
	c.rate = min(c.rate, ceil)
}

// updatePace derives the pacer's rate from the law's rate, the declared ceiling and a spread.
func (c *control) updatePace(t int64) {
	p := min(c.rate, c.ceiling())
	if c.spread > p && t < c.spreadUntil {
		p = c.spread
	}
	c.pace = min(max(p, c.cfg.minRate), c.cfg.maxRate)
	if c.policy > 0 && c.policy < c.cfg.minRate {
		c.pace = min(c.pace, c.policy) // a server that declares a slow rate is obeyed
	}
}

// decay lets what was learned fade after a quiet spell ending at t; it reports whether the state
// was forgotten altogether.
func (c *control) decay(t int64) (forgot bool) {
	if c.phase == phaseCold {
		return false
	}
	quiet := t - c.lastActive
	hl := int64(c.cfg.halfLife)
	if quiet <= 0 || quiet < hl/64 {
		return false
	}
	if quiet >= 20*hl {
		sent, s, th, cu := c.sent, c.successes, c.throttles, c.cuts
		c.init(c.cfg)
		c.sent, c.successes, c.throttles, c.cuts = sent, s, th, cu
		return true
	}
	f := math.Exp2(-float64(quiet) / float64(hl))
	init := c.cfg.initialRate
	c.rate = init + (c.rate-init)*f
	c.est *= f
	c.phase = phaseSlowStart
	c.spread, c.spreadUntil = 0, 0
	c.updatePace(t)
	return false
}
