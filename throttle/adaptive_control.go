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
// with a window) puts the limiter at that rate less the headroom at once; a remaining count
// starts a slow start, which doubles the rate every slowStartDoubling (or two round trips) of
// full use until the first throttle (1,000/s is reached from 20/s in about 0.6 s); a response
// with no signal at all leaves the limiter unpaced (pace 0: every request goes at once) until a
// signal comes. A cut with nothing to cut (the throttled request left unpaced) is firstCut's: to
// just under the success rate measured, or, with nothing measured, a slow start from the initial
// rate with no bound, which a blackout (throttles with nothing admitted in between) holds at a
// quarter of the initial rate at the lowest until the first success sets the bound.
//
// Cuts. A throttle (429, or a status of WithThrottleStatuses), or a success that took the last of
// the declared quota, cuts the rate, at most once per epoch: a throttle for a request sent before
// the cut, or within two intervals after it (the server may not have recovered yet), belongs to
// it. The cut goes to just under the rate of successes measured over the last second (what the
// server admitted), by 10% at least and 50% at most (less than that when the pace was more than
// four times what the server admitted: a declaration that was a lie). Measurements leave out
// gaps in sending (the key paused by a Retry-After), and one over less than a quarter of a second
// is no measurement: right after a gap, a server that was left alone admits a burst.
//
// The bound. A cut also sets the bound wmax, the lowest pace known to draw throttles: the pace at
// the cut or, when the pace stayed above what the server admitted for a whole second (it was
// holding the client back), the most the server admitted in any second of the last two. A
// throttle that came while the pace was well below that, or within a second of a blackout, is
// what is left of an earlier excess (a window or a log still full of it) and leaves the bound.
//
// Recovery and probing. After a cut the rate returns quickly (time constant recoverTau) to just
// under the bound, lingers there, then probes: it grows by probeGain*rate^probeExp*s^2 per
// second, s seconds after it reached the bound, while the pace is what holds requests back.
// Growth that is sublinear in the rate while cuts are proportional to it lets limiters that share
// a server drift towards equal shares; under a declared rate the growth is linear in it
// (policyProbe) and the same for all of them, which converges faster. When throttles come with a
// Retry-After, each one pauses the key: the rate returns further below the bound (pausedMargin)
// and waits pausingHold before it probes.
//
// Blackouts. A throttle that follows a cut with nothing admitted in between is a blackout (an
// exhausted window refuses everything until it ends): each further epoch halves the rate, down to
// a 32nd of the bound, so that waiting it out costs a handful of throttles; the first success
// ends it, and the rate returns at once to just under the most the server admitted lately, so
// that the window that has just opened is used from its start.
//
// Distrust. A server that throttles more requests than it admits while declaring a rate is not
// believed: its declarations are ignored from then on (until the state is forgotten) and the rate
// is learned as if it declared nothing.
//
// The declared rate caps every rate the law takes; remaining quota goes at once on top of the
// pace (the burst allowance, adaptive_allowance.go) or, when it is not believed, can raise the
// pace above it (see learnRemaining); WithRateBounds clamps everything.
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
	// policyProbe is how fast, as a fraction of a declared rate per second, the rate grows back
	// towards it after a cut.
	policyProbe = 0.1
	// pausedMargin is how far below the bound the rate returns to after a throttle that paused
	// the key (a Retry-After): the success rate measured after a pause includes the burst that the
	// server saved up meanwhile.
	pausedMargin = 0.05
	// pausingHold is how long the rate stays at the bound before probing while throttles come
	// with Retry-After (each costs a pause of the key).
	pausingHold = int64(20 * time.Second)
	// cutMargin is how far below the measured success rate a cut sets the rate.
	cutMargin = 0.02
	// cutMin and cutMax bound a cut: the rate is multiplied by at least cutMin and at most cutMax.
	cutMin, cutMax = 0.5, 0.9
	// cutFar bounds the floor of a cut as a multiple of the measured success rate.
	cutFar = 4.0
	// blackoutCut multiplies the rate on every further cut of a blackout, and blackoutFloor
	// bounds it below as a fraction of the last bound.
	blackoutCut, blackoutFloor = 0.5, 1.0 / 32
	// saturatedMargin: when the pace stayed above the most the server admitted in a second by this
	// fraction for the whole last second, the server was holding the client back, and what it
	// admitted is its rate.
	saturatedMargin = 0.05
	// spreadCap bounds the spread of remaining quota, as a multiple of the rate the limiter keeps.
	spreadCap = 4
	// distrustMin is how many throttles it takes, and more of them than successes, before a
	// declared rate is not believed: a client that joins a key that others use up draws a
	// throttle or two before its first success.
	distrustMin = 4
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
	// paced is set by the first signal from the server (a throttle, a declared rate or a
	// remaining quota), at pacedAt; until then the limiter paces nothing and pace is 0.
	paced   bool
	pacedAt int64
	// unpaced is set when a response ended the cold start without a signal, at unpacedSince:
	// from then on until pacedAt, requests went unpaced.
	unpaced      bool
	unpacedSince int64
	// blindUntil: successes for requests sent before it neither end a run of cuts nor grow the
	// rate: it is the epoch of a first cut that found nothing to measure, and those requests left
	// unpaced or before the server could recover, so their answers are no news.
	blindUntil int64
	rate       float64 // the rate the law settled on
	pace       float64 // the rate the pacer keeps: rate, capped by the declared rate, raised by a spread; 0 while not paced

	policy   float64 // rate paced under a declared rate (see learnPolicy), clamped; 0 when none
	declared float64 // the declared rate itself (limit per window), clamped; 0 when none
	// distrust is set when the server throttled us well below its declared rate: its
	// declarations are ignored until what was learned is forgotten.
	distrust bool
	est      float64 // success rate measured at the last cut; 0 before any
	wmax     float64 // upper bound of the server's rate: the pace that drew a throttle, or the peak
	// recover is a rate to return to quickly (after slow start), 0 when none.
	recover float64

	spread      float64 // rate at which the remaining quota can be spread until spreadUntil
	spreadUntil int64

	hasCut   bool
	lastCut  int64
	plateau  int64 // when the rate last returned to the bound after a cut: the probe's origin
	epoch    int64 // throttles for requests sent before this belong to the last cut
	lastGrow int64
	// pausing tells whether the last throttle came with a Retry-After (so the key was paused).
	pausing bool
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
// how many requests are still out, busy whether requests had to wait for the pace lately, h the
// recent history (already counting this response).
func (c *control) observe(t, sent int64, throttled bool, info ratelimitheader.Info, inflight int, busy, allowed bool, h *history) {
	c.learnPolicy(info)
	if !c.paced && (c.policy > 0 || info.HasRemaining) {
		// Rate-limit headers are the first signal: from here on the limiter paces, as if it
		// had started at the initial rate (a throttle without them is handled by cut).
		c.paced, c.pacedAt, c.lastGrow = true, t, t
	}
	if c.phase == phaseCold {
		c.phase = phaseSlowStart
		c.lastGrow = t
		if !c.paced && !throttled {
			c.unpaced, c.unpacedSince = true, t
		}
	}
	if c.phase == phaseSlowStart && c.policy > 0 {
		// A declared rate needs no search (at a cold start, or after a quiet spell).
		c.phase = phaseSteady
		c.rate = c.ceiling()
	}
	exhausted := false
	if info.HasRemaining {
		exhausted = c.learnRemaining(t, info, inflight, allowed)
	}
	if throttled {
		c.pausing = info.HasRetryAfter
		c.throttles++
		c.cut(t, sent, info.HasRetryAfter, h)
	} else {
		c.successes++
		if sent < c.blindUntil {
			// A request sent unpaced before the first cut: it tells nothing new.
			c.rate = min(max(c.rate, c.cfg.minRate), c.ceiling())
			c.updatePace(t)
			return
		}
		c.admitted(t, h)
		if exhausted {
			// The request took the last of the quota: the next one would be refused. Cut now,
			// before a throttle does (and its Retry-After pauses the key): that is how limiters
			// that share a key, and the headers, settle on shares that fit.
			c.cut(t, sent, false, h)
		} else if c.paced {
			c.grow(t, busy) // an unpaced limiter has no rate to grow
		}
	}
	c.rate = min(max(c.rate, c.cfg.minRate), c.ceiling())
	c.updatePace(t)
}

// learnPolicy takes the server's declared rate from RateLimit-Policy or X-RateLimit-Limit with a
// window, clamped to the bounds (a claim above the maximum is read as the maximum).
func (c *control) learnPolicy(info ratelimitheader.Info) {
	if c.distrust || info.Limit <= 0 || info.Window <= 0 {
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
	c.declared = min(float64(info.Limit)/info.Window.Seconds(), c.cfg.maxRate)
}

// learnRemaining applies the remaining quota and its reset; it reports whether the response took
// the last of the quota (r = 0) in a way that should cut the rate.
//
// While the burst allowance is in force (allowed: a quota was declared and no throttle
// contradicted the counts, see allowance), what remains is granted at once, so there is nothing
// left to spread, and running out is what granting it does: it says nothing of the pace, which
// stays at the declared rate.
//
// Otherwise (no quota declared, or the counts not believed) remaining quota only ever grants:
// when more is left than the pace would spend before the reset, the rest is spread evenly until
// the reset (the pace becomes left/reset, where left is the remaining less the requests still in
// flight, which the server has not counted yet). That is safe for all five algorithms: every one
// of them admits the remaining count at once (that is what r means), and a window's count or a
// bucket's tokens only grow until the reset. A reset written in whole seconds rounded up only
// makes the spread slower than it could be. It never takes away below the declared rate, because
// no rule on (r, t) is right for every algorithm: for a token bucket t is the time until the
// bucket is full, and tokens come back continuously, so pacing r over t would stall a client whose
// bucket is empty although a token comes every 1/rate; for a fixed window nothing comes back
// before t. Running out is instead fed back: a success that took the last unit cuts the rate as a
// throttle does (before the next request draws one; that is how limiters that share a key settle
// on shares that fit), and a 429's Retry-After pauses the key until quota is back (the Transport).
//
// Claims are not trusted blindly: the remaining count is clamped to the quota when one is
// declared, and the spread to spreadCap times the rate the limiter already keeps, so a server that
// claims a huge remainder does not unleash a burst.
func (c *control) learnRemaining(t int64, info ratelimitheader.Info, inflight int, allowed bool) bool {
	if allowed {
		// The burst allowance grants what remains at once: there is nothing left to spread, and
		// running out is what bursting does, no sign of a rate too high (see allowance).
		c.spread = 0
		return false
	}
	r := info.Remaining
	if info.Limit > 0 {
		r = min(r, info.Limit)
	}
	left := r - int64(inflight)
	if left > 0 && info.HasReset && info.Reset > 0 {
		c.spread = min(float64(left)/info.Reset.Seconds(), c.rate*spreadCap, c.cfg.maxRate)
		c.spreadUntil = t + int64(info.Reset)
	} else {
		c.spread = 0
	}
	return info.Remaining == 0
}

// cut lowers the rate after a throttle, once per epoch: a throttle for a request sent before the
// last cut belongs to the same epoch.
func (c *control) cut(t, sent int64, paused bool, h *history) {
	if c.hasCut && sent < c.epoch {
		return
	}
	if !c.hasCut && c.policy > 0 && c.sentUnpaced(sent) {
		return // the declared rate is the pace now; requests sent without one drew this throttle
	}
	if !c.paced {
		if c.sentUnpaced(sent) {
			c.firstCut(t, paused, h) // there is no pace to cut
			return
		}
		// The cold start's probe drew it: that pace is the one to cut.
		c.paced, c.pacedAt = true, t
	}

	cur := c.pace
	c.phase = phaseSteady
	c.hasCut, c.lastCut = true, t
	c.recover = 0
	c.cuts++
	c.run++
	if c.run > 1 {
		// Nothing was admitted since the last cut: the server admits nothing for now.
		c.rate = max(cur*blackoutCut, c.wmax*blackoutFloor)
		if c.wmax == 0 {
			// No bound yet (the unpaced start used up a window): halve, but keep probing at a
			// quarter of the initial rate at least, so that the window's end is found soon.
			c.rate = max(cur*blackoutCut, c.cfg.initialRate/4)
		}
		c.epoch = t
		return
	}
	// The bound: the server's rate is below the pace that drew the throttle and, when the pace
	// stayed above what the server admitted for a whole second (it was holding us back), about
	// the most it admitted in any second lately (on a ramp the successes lag the pace, and only
	// the pace bounds the rate). When the pace is well below that, or within a second of a
	// blackout, the throttle is what is left of an earlier excess (a window, a log still full of
	// it) and the bound stays.
	measured, n := h.measured(t)
	if c.policy > 0 && c.throttles > c.successes && c.throttles >= distrustMin {
		// Throttled more often than admitted although the server declared its rate: the
		// declaration is not to be trusted (a server behind with several clients on one key
		// answers most requests and throttles a few). From now on it is ignored; the rate is learned as if
		// the server said nothing, starting from what it admitted.
		c.distrust, c.policy, c.declared = true, 0, 0
		c.rate, c.wmax, c.recover = c.cfg.initialRate, 0, 0
		if n >= minMeasured {
			c.rate = measured * (1 - cutMargin)
		}
		c.phase = phaseSlowStart
		c.newEpoch(t)
		return
	}
	switch {
	case c.blackoutEnd > 0 && t-c.blackoutEnd < meterSpan:
		// keep the bound
	case paused && n >= minMeasured:
		// The throttle paused the key (Retry-After): every throttle now costs a pause, so the
		// bound errs low, at what the server admitted (but no less than half the pace).
		c.wmax = min(cur, max(measured, cur*cutMin))
	default:
		peak, pn := h.peak(t)
		switch {
		case pn < minMeasured || c.wmax == 0:
			c.wmax = cur
		case cur < peak*cutMax:
			// keep the bound: what is left of an earlier excess
		case h.paces.min1() < peak*(1+saturatedMargin):
			c.wmax = cur // not held back for a whole second: only the pace bounds the rate
		default:
			c.wmax = min(cur, peak)
		}
	}
	r, floor := cur*cutMax, cur*cutMin
	if n >= minMeasured {
		r = min(r, measured*(1-cutMargin))
		// Far above what the server admits (a declared rate that was a lie), the floor gives
		// way: no more than cutFar times the measured rate is kept.
		floor = min(floor, measured*cutFar)
		c.est = measured
	} else {
		c.est = r
	}
	c.rate = max(r, floor)
	if n >= minMeasured {
		// The rate returns quickly to just under the bound, lingers there, then probes (see
		// grow). Without a measurement (a burst of throttles at the start) it only probes.
		margin := recoverMargin
		if paused {
			margin = pausedMargin // a throttle costs a pause: keep well clear
		}
		c.recover = c.wmax * (1 - margin)
		if paused {
			c.rate = min(c.rate, c.recover)
		}
	}
	c.newEpoch(t)
}

// sentUnpaced reports whether a request sent at sent left while the limiter paced nothing (after
// a response without a signal, before the first signal).
func (c *control) sentUnpaced(sent int64) bool {
	return c.unpaced && sent >= c.unpacedSince && (!c.paced || sent < c.pacedAt)
}

// firstCut is the cut of a limiter that paced nothing until this throttle at t: there is no pace
// to cut, so it starts from what the server admitted. With a measurement (minMeasured successes
// in the last second), the rate goes to just under the measured success rate, the bound to the
// most admitted in any second lately, and the rate returns quickly to just under it (as after any
// cut). Without one (the callers' first requests drew the throttle, or a burst took the server's
// quota in a fraction of a second), nothing is known of the rate: the limiter slow-starts from the
// initial rate with no bound, and the next cut, from a real pace, sets one.
func (c *control) firstCut(t int64, paused bool, h *history) {
	if !c.paced {
		c.paced, c.pacedAt = true, t
	}
	c.hasCut, c.lastCut = true, t
	c.recover = 0
	c.cuts++
	c.run++
	measured, n := h.measured(t)
	if n < minMeasured {
		// The answers to the requests sent within this cut's epoch are no news (see blindUntil):
		// a throttle that follows with none sent since admitted is a blackout (a window that
		// the unpaced start used up).
		c.phase, c.rate, c.wmax, c.est = phaseSlowStart, c.cfg.initialRate, 0, 0
		c.lastGrow = t
		c.newEpoch(t)
		c.blindUntil = c.epoch
		return
	}
	c.phase = phaseSteady
	c.est, c.wmax = measured, measured
	if peak, pn := h.peak(t); pn >= minMeasured {
		c.wmax = max(peak, measured)
	}
	c.rate = measured * (1 - cutMargin)
	margin := recoverMargin
	if paused {
		margin = pausedMargin
	}
	c.recover = c.wmax * (1 - margin)
	if paused {
		c.rate = min(c.rate, c.recover)
	}
	c.plateau = t
	c.newEpoch(t)
}

// newEpoch starts an epoch at a cut at t: throttles for requests sent before it belong to the
// cut. It begins two intervals at the new rate after the cut, so that a server that was just
// emptied (a bucket without tokens) has had time to admit again before a throttle counts anew.
func (c *control) newEpoch(t int64) {
	c.epoch = t + int64(2e9/max(c.rate, c.cfg.minRate))
}

// admitted notes a success; one after a run of cuts ends a blackout.
func (c *control) admitted(t int64, h *history) {
	if c.run > 1 {
		// What the server admitted in the last seconds while we asked for more is an upper
		// bound of its rate, tighter than the pace that drew the first throttle. The rate
		// returns to just under it at once: backing off only served to notice the end of the
		// blackout, and a window that has just opened should be used from its start.
		// Without a measurement (too little was sent lately: the callers backed off too), it
		// returns there quickly instead, bounded by what was measured at the blackout's start.
		c.lastGrow, c.blackoutEnd, c.plateau = t, t, t
		c.recover = 0
		if measured, n := h.peak(t); n >= minMeasured {
			if c.wmax == 0 {
				c.wmax = measured // no bound yet: the blackout began before any was set
			}
			c.wmax, c.est = min(c.wmax, measured), measured
			c.rate = max(c.rate, c.wmax*(1-recoverMargin))
		} else if c.est > 0 {
			c.recover = min(c.wmax, c.est) * (1 - recoverMargin)
		} else if c.wmax == 0 {
			// Nothing known of the rate (the unpaced start's cut measured nothing): search for
			// it again from here.
			c.phase = phaseSlowStart
		}
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
			c.rate, c.phase, c.plateau = top, phaseSteady, t
		}
	case c.policy > 0:
		// The server declared its rate: grow back towards it linearly, by the same amount per
		// second for every limiter that shares the server (additive increase: with proportional
		// cuts, their shares converge).
		c.rate += policyProbe * c.policy * float64(dt) / 1e9
		c.recover = 0
	case c.recover > c.rate:
		c.rate += (c.recover - c.rate) * min(1, float64(dt)/1e9/recoverTau)
		if c.recover-c.rate < c.recover*1e-3 {
			c.rate, c.recover = c.recover, 0
		}
		c.plateau = t
	default:
		c.recover = 0
		since := t - c.plateau
		if c.pausing {
			// A throttle costs a pause (Retry-After): stay just under the bound for a while
			// before looking for more.
			since -= pausingHold
		}
		if since > 0 {
			s := float64(since) / probeAccel
			c.rate += probeGain * math.Pow(c.rate, probeExp) * s * s * float64(dt) / 1e9
		}
	}
}

// cyclesDropped takes over from window cycles (adaptive_cycle.go) that were dropped at t because
// others use the key: they sent at rate (their quota per period), and a burst after a listening
// gap drew throttles. The law cuts as hard as it may (to cutMin of that rate), with that rate as
// its bound, and probes from there, so that limiters sharing the key converge to equal shares.
func (c *control) cyclesDropped(t int64, rate float64) {
	c.phase = phaseSteady
	c.rate = min(c.rate, rate*cutMin)
	if c.wmax == 0 || c.wmax > rate {
		c.wmax = rate
	}
	c.recover, c.plateau = 0, t
	c.newEpoch(t)
	c.rate = min(max(c.rate, c.cfg.minRate), c.ceiling())
	c.updatePace(t)
}

// updatePace derives the pacer's rate from the law's rate, the declared ceiling and a spread.
func (c *control) updatePace(t int64) {
	if !c.paced && c.phase != phaseCold {
		c.pace = 0 // a response came back without a signal: nothing to pace
		return
	}
	p := min(c.rate, c.ceiling())
	if c.spread > p && t < c.spreadUntil {
		p = c.spread
	}
	c.pace = min(max(p, c.cfg.minRate), c.cfg.maxRate)
	if c.policy > 0 && c.policy < c.cfg.minRate {
		c.pace = min(c.pace, c.policy) // a server that declares a slow rate is obeyed
	}
}

// decay lets what was learned fade after a quiet spell ending at t. It reports whether it changed
// the pace, and whether it forgot everything (after twenty half-lives).
//
// Within that, the rate moves back towards the initial rate by half the distance per half-life,
// and the limiter starts again as at a cold start, with a slow start that stops at the last
// bound (the server's limit may have changed meanwhile: a throttle finds out if it fell, probing
// if it rose; a declared rate is taken again from the next response).
func (c *control) decay(t int64) (changed, forgot bool) {
	if c.phase == phaseCold || !c.paced {
		return false, false // nothing learned, nothing to forget: still no pace
	}
	quiet := t - c.lastActive
	hl := int64(c.cfg.halfLife)
	if quiet <= 0 || quiet < hl/64 {
		return false, false
	}
	if quiet >= 20*hl {
		s, th, cu := c.successes, c.throttles, c.cuts
		c.init(c.cfg)
		c.successes, c.throttles, c.cuts = s, th, cu
		return true, true
	}
	f := math.Exp2(-float64(quiet) / float64(hl))
	init := c.cfg.initialRate
	c.rate = init + (c.rate-init)*f
	c.recover = 0
	c.phase = phaseSlowStart
	c.lastGrow = t
	c.spread, c.spreadUntil = 0, 0
	c.updatePace(t)
	return true, false
}
