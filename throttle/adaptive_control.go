package throttle

import (
	"math"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// The control law of an Adaptive limiter. Rates are in requests per second, times are the
// limiter's integer clock (nanoseconds).
//
// Phases. Before the first response the pace is the initial rate (a cold-start probe: the first
// request goes at once, the next ones are spaced, so 16 workers do not stampede a server whose
// burst is 10). The first response decides: a declared rate (RateLimit-Policy, X-RateLimit-Limit
// with a window) puts the limiter at that rate less the headroom at once; no declaration starts
// a slow start, which doubles the rate every slowStartDoubling (or two round trips) of full use
// until the first throttle (1,000/s is reached from 20/s in about 0.6 s).
//
// A throttle (429, or a status of WithThrottleStatuses) cuts the rate, at most once per epoch: a
// throttle for a request sent before the last cut does not cut again, as those requests left
// before the limiter knew (nor does one sent within two intervals after it, when the server may
// not have recovered yet). The cut goes to just under the rate of successes of the last second
// (what the server admitted, the estimate of its rate), and by 10% at least and 50% at most.
// A throttle that follows a cut with nothing admitted in between is a blackout (an exhausted
// window, which refuses everything until it ends): each further epoch halves the rate, down to a
// 32nd of the last bound, so that waiting it out costs a handful of throttles; the first success
// ends it, and the rate returns at once to just under the most the server admitted in any second
// of the last two, so that the window that has just opened is used from its start.
//
// Between throttles the rate probes upwards, while the pace is what holds requests back: by
// probeGain*sqrt(rate) per second, faster and faster with the time since the last cut. Cuts are
// proportional to the rate and growth is sublinear, so limiters that share a server drift towards
// equal shares (as with AIMD's additive increase), and the acceleration leaves a low estimate
// within seconds. Right after slow start, whose first throttle comes after the server's burst was
// spent and the success rate lags the pace, the rate first returns quickly (time constant
// recoverTau) to just under the pace that drew the throttle.
//
// The declared rate caps every rate the law takes; remaining quota can raise the pace above it
// (see learnRemaining); WithRateBounds clamps everything.
const (
	// slowStartDoubling is the shortest time in which the rate doubles before the first throttle;
	// it is at least two round trips, so that feedback can arrive in between.
	slowStartDoubling = int64(100 * time.Millisecond)
	// recoverTau is the time constant, in seconds, of the return after slow start.
	recoverTau = 0.3
	// recoverMargin is how far below the pace that drew the first throttle the rate returns to.
	recoverMargin = 0.02
	// probeGain, probeAccel and probeStep shape the probe between throttles: the rate grows by
	// probeGain*sqrt(rate)*(1+(s/probeAccel)^2) per second, s seconds after the last cut, in steps
	// of at most probeStep (a pause in traffic does not count as probing).
	probeGain  = 0.75
	probeExp   = 0.25
	probeAccel = float64(time.Second)
	probeStep  = int64(100 * time.Millisecond)
	// cutMargin is how far below the measured success rate a cut sets the rate.
	cutMargin = 0.02
	// cutMin and cutMax bound a cut: the rate is multiplied by at least cutMin and at most cutMax.
	cutMin, cutMax = 0.5, 0.9
	// blackoutCut multiplies the rate on every further cut of a blackout, and blackoutFloor
	// bounds it below as a fraction of the last bound.
	blackoutCut, blackoutFloor = 0.5, 1.0 / 32
	// saturatedMargin: when the pace stayed above the most the server admitted in a second by this
	// fraction for the whole last second, the server was holding the client back, and what it
	// admitted is its rate.
	saturatedMargin = 0.05
	// minMeasured is how many successes in the last second make the measured rate trustworthy.
	minMeasured = 8
)

type phase uint8

const (
	phaseCold      phase = iota // nothing observed yet: the initial rate
	phaseSlowStart              // no throttle and no declared rate yet: ramping up exponentially
	phaseSteady                 // after a throttle or a declared rate
)

// control is the state of an Adaptive limiter's control law. Its methods take the current time t
// on the limiter's integer clock; the limiter's mutex is held.
type control struct {
	cfg *adaptiveConfig

	phase phase
	rate  float64 // the rate the law settled on
	pace  float64 // the rate the pacer keeps: rate, capped by the declared rate, raised by a spread

	policy float64 // declared rate, clamped; 0 when none
	est    float64 // success rate measured at the last cut; 0 before any
	wmax   float64 // upper bound of the server's rate: the pace that drew a throttle, or the peak
	// recover is a rate to return to quickly (after slow start), 0 when none.
	recover float64

	spread      float64 // rate at which the remaining quota can be spread until spreadUntil
	spreadUntil int64

	hasCut   bool
	lastCut  int64
	epoch    int64 // throttles for requests sent before this belong to the last cut
	lastGrow int64
	// run counts the cuts since the last success: more than one means throttles keep coming with
	// nothing admitted in between (a blackout, such as an exhausted window).
	run int
	// blackoutEnd is when the last blackout ended.
	blackoutEnd int64

	srtt       int64 // smoothed round-trip time, 0 before the first sample
	lastActive int64

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
		return min(c.policy*(1-c.cfg.headroom), c.cfg.maxRate)
	}
	return c.cfg.maxRate
}

// observe applies one response to the law. sent is when its request left (estimated), inflight
// how many requests are still out, busy whether requests had to wait for the pace lately, succ
// the meter of successes (already counting this response) and paces the recent paces.
func (c *control) observe(t, sent int64, throttled bool, info ratelimitheader.Info, inflight int, busy bool, succ *meter, paces *paceLog) {
	c.learnPolicy(info)
	if c.phase == phaseCold {
		c.phase = phaseSlowStart
		c.lastGrow = t
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
		c.cut(t, sent, succ, paces)
	} else {
		c.successes++
		c.admitted(t, succ)
		if exhausted {
			// The request took the last of the quota: the next one would be refused. Cut now,
			// before a throttle does (and its Retry-After pauses the key): that is how limiters
			// that share a key, and the headers, settle on shares that fit.
			c.cut(t, sent, succ, paces)
		} else {
			c.grow(t, busy)
		}
	}
	c.rate = min(max(c.rate, c.cfg.minRate), c.ceiling())
	c.updatePace(t)
}

// learnPolicy takes the server's declared rate from RateLimit-Policy or X-RateLimit-Limit with a
// window, clamped to the bounds (a claim above the maximum is read as the maximum).
func (c *control) learnPolicy(info ratelimitheader.Info) {
	if info.Limit <= 0 || info.Window <= 0 {
		return
	}
	// A sliding window counter admits Limit-1 per window in the steady state, not Limit (its
	// estimate of the previous window's weight leaves no room for the last one): pace at that,
	// so that every algorithm keeps up (for 200 per second, 199/s).
	n := float64(info.Limit)
	if info.Limit > 1 {
		n--
	}
	r := n / info.Window.Seconds()
	if !(r > 0) {
		return
	}
	c.policy = min(max(r, 1/ratelimitheader.MaxDelay.Seconds()), c.cfg.maxRate)
}

// learnRemaining applies the remaining quota and its reset; it reports whether the response took
// the last of the quota (r = 0).
//
// Remaining quota only ever grants: when more is left than the pace would spend before the reset,
// the rest is spread evenly until the reset (the pace becomes left/reset, where left is the
// remaining less the requests still in flight, which the server has not counted yet). That is
// safe for all five algorithms: every one of them admits the remaining count at once (that is
// what r means), and a window's count or a bucket's tokens only grow until the reset. A reset
// written in whole seconds rounded up only makes the spread slower than it could be.
//
// Remaining quota never takes away below the declared rate, because no rule on (r, t) is right
// for every algorithm: for a token bucket t is the time until the bucket is full, and tokens come
// back continuously, so pacing r over t would stall a client whose bucket is empty although a
// token comes every 1/rate; for a fixed window nothing comes back before t. Running out is
// instead fed back: a success that took the last unit cuts the rate as a throttle does (before
// the next request draws one), and a 429's Retry-After pauses the key until quota is back (the
// Transport).
func (c *control) learnRemaining(t int64, info ratelimitheader.Info, inflight int) bool {
	left := info.Remaining - int64(inflight)
	if left > 0 && info.HasReset && info.Reset > 0 {
		c.spread = min(float64(left)/info.Reset.Seconds(), c.cfg.maxRate)
		c.spreadUntil = t + int64(info.Reset)
	} else {
		c.spread = 0
	}
	return info.Remaining == 0
}

// cut lowers the rate after a throttle, once per epoch: a throttle for a request sent before the
// last cut belongs to the same epoch.
func (c *control) cut(t, sent int64, succ *meter, paces *paceLog) {
	if c.hasCut && sent < c.epoch {
		return
	}

	cur := c.pace
	// After slow start (or while still returning from it) the rate returns quickly to just under
	// the new bound after the cut; so it does after a throttle that came although the pace was
	// well below what the server admitted lately (see below).
	recovering := c.phase == phaseSlowStart || c.recover > 0
	c.phase = phaseSteady
	c.hasCut, c.lastCut = true, t
	c.recover = 0
	c.cuts++
	c.run++
	if c.run > 1 {
		// Nothing was admitted since the last cut: the server admits nothing for now.
		c.rate = max(cur*blackoutCut, c.wmax*blackoutFloor)
		c.epoch = t
		return
	}
	// The server's rate is below the pace that drew the throttle and, when the pace stayed above
	// what the server admitted for a whole second (it was holding us back), about the most it
	// admitted in any second lately. (When the pace is well below that, the throttle is what is left of an
	// earlier excess, such as a window still full of it, and the bound stays.) On a ramp the
	// successes lag the pace, and only the pace bounds the rate.
	if c.blackoutEnd > 0 && t-c.blackoutEnd < meterSpan {
		// Within a second of a blackout: what is left of the excess that caused it (a sliding
		// log forgets it entry by entry). The bound stays; the rate returns to it afterwards.
		recovering = true
	} else if peak, pn := succ.peak(t); pn < minMeasured || c.wmax == 0 || paces.min1() < peak*(1+saturatedMargin) {
		c.wmax = cur
	} else if cur >= peak*cutMax {
		c.wmax = min(cur, peak)
	} else {
		recovering = true
	}
	r := cur * cutMax
	if measured, n := succ.rate(t); n >= minMeasured {
		r = min(r, measured*(1-cutMargin))
		c.est = measured
	} else {
		c.est = r
	}
	c.rate = max(r, cur*cutMin)
	if recovering {
		c.recover = c.wmax * (1 - recoverMargin)
	}
	c.newEpoch(t)
}

// newEpoch starts an epoch at a cut at t: throttles for requests sent before it belong to the
// cut. It begins two intervals at the new rate after the cut, so that a server that was just
// emptied (a bucket without tokens) has had time to admit again before a throttle counts anew.
func (c *control) newEpoch(t int64) {
	c.epoch = t + int64(2e9/max(c.rate, c.cfg.minRate))
}

// admitted notes a success; one after a run of cuts ends a blackout.
func (c *control) admitted(t int64, succ *meter) {
	if c.run > 1 {
		// What the server admitted in the last seconds while we asked for more is an upper
		// bound of its rate, tighter than the pace that drew the first throttle. The rate
		// returns to just under it at once: backing off only served to notice the end of the
		// blackout, and a window that has just opened should be used from its start.
		if measured, n := succ.peak(t); n >= minMeasured && measured < c.wmax {
			c.wmax, c.est = measured, measured
		}
		c.rate = max(c.rate, c.wmax*(1-recoverMargin))
		c.lastGrow, c.blackoutEnd = t, t
	}
	c.run = 0
}

// grow raises the rate after a success. busy tells whether requests had to wait for the pace
// lately: a caller that sends slower than the pace teaches nothing about a faster one, so the
// rate only grows while the pace is what holds requests back.
func (c *control) grow(t int64, busy bool) {
	dt := min(t-c.lastGrow, probeStep)
	c.lastGrow = t
	if !busy || dt <= 0 {
		return
	}
	switch {
	case c.phase == phaseSlowStart:
		dbl := max(slowStartDoubling, 2*c.srtt)
		c.rate *= math.Exp2(float64(dt) / float64(dbl))
		if top := c.wmax * (1 - recoverMargin); c.wmax > 0 && c.rate >= top {
			// After a quiet spell: back where the last bound was; probe from there.
			c.rate, c.phase, c.lastCut = top, phaseSteady, t
		}
	case c.recover > c.rate:
		c.rate += (c.recover - c.rate) * min(1, float64(dt)/1e9/recoverTau)
		if c.recover-c.rate < c.recover*1e-3 {
			c.rate, c.recover = c.recover, 0
		}
	default:
		s := float64(t-c.lastCut) / probeAccel
		c.rate += probeGain * math.Pow(c.rate, probeExp) * (1 + s*s) * float64(dt) / 1e9
	}
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
		s, th, cu := c.successes, c.throttles, c.cuts
		c.init(c.cfg)
		c.successes, c.throttles, c.cuts = s, th, cu
		return true
	}
	f := math.Exp2(-float64(quiet) / float64(hl))
	init := c.cfg.initialRate
	c.rate = init + (c.rate-init)*f
	c.est *= f
	c.wmax *= f
	c.recover = 0
	c.phase = phaseSlowStart
	c.lastGrow = t
	c.spread, c.spreadUntil = 0, 0
	c.updatePace(t)
	return false
}
