package throttle

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// Adaptive is a Limiter that learns the rate a server allows from the responses it observes (it
// implements Learner) and paces requests evenly, in FIFO order, just under that rate. Create one
// with NewAdaptive, or one per key with AdaptiveFactory; the zero value is not usable.
//
// What it learns from (the control law is described in full in adaptive_control.go):
//
//   - Retry-After is not its business: the Transport pauses the whole key first (Retry-After
//     wins). Throttles that come with one make the limiter more careful (see below).
//   - RateLimit-Policy, or X-RateLimit-Limit with a window, declares the server's rate: from the
//     first response on, the limiter paces at (limit-1)/window less the headroom (WithHeadroom),
//     a pace that every algorithm sustains (a sliding window counter admits limit-1 per window).
//     A limit declared without a window (X-RateLimit-Limit, -Remaining and -Reset, as GitHub and
//     many gateways send them) is taken to be per the longest reset seen, in whole seconds (see
//     windowGuess).
//   - RateLimit, or X-RateLimit-Remaining, says what is left. What is left goes at once,
//     without waiting for the pace (the burst allowance): after a response that says r remain,
//     up to r less the requests still in flight may go; each send spends one, and each newer
//     response sets it again (an older one, overtaken on the way, can only lower it). When it
//     is spent the pace goes on at the declared rate. So a caller of an API that allows 5,000
//     an hour and has 4,999 left does not wait 0.72 s before each call, and a window's quota,
//     or a bucket's burst, is used when it is there. A server whose quota comes back whole at
//     its reset (a fixed window) is told apart after a throttle, by how much comes back: from
//     then on, a response that says nothing is left holds the next request until the reset
//     instead of drawing another throttle. The counts are believed only while the limiter
//     seems to be alone on the key: the remaining count is clamped to the declared quota (no
//     quota, no allowance), and a throttle while some was left, quota that went without this
//     limiter spending it, repeated throttles, or windows that come back short end the
//     allowance until what was learned is forgotten; the limiter then paces at the declared
//     rate, spreads what remains over the time to the reset when that is faster, and treats a
//     response that took the last of the quota (r = 0) as a throttle.
//   - A throttle (429, or a status of WithThrottleStatuses) cuts the rate, at most once per
//     epoch (a throttle for a request sent before the cut belongs to it): to just under the rate
//     of successes of the last second, what the server admitted, and by 10% to 50%. The rate then
//     returns quickly to just under the bound the throttle revealed, lingers there, and probes
//     above it, slowly at first. Throttles with nothing admitted in between (an exhausted
//     window) back off fast and end with a return to what the server admitted.
//   - No signal, no pace. Before the first response the limiter probes at the initial rate (the
//     first request goes at once, the next ones are spaced, so that 16 workers do not stampede a
//     server whose burst is 10 before it had a chance to declare its rate). A response without a
//     signal (a success with no rate-limit header) ends that: from then on Reserve lets every
//     request go at once (the send is still recorded), and Rate reports 0, until a throttle or a
//     header gives a signal. A server that never throttles and says nothing is never paced, also
//     after a quiet spell.
//   - The first throttle after such an unpaced start has no pace to cut: the rate goes to just
//     under what the server admitted (the success rate measured over the last second), and
//     returns quickly to just under the most it admitted in any second lately. When too few
//     successes were measured (the callers' first burst drew the throttle), the limiter searches
//     with a slow start from the initial rate that doubles the rate every 100 ms of full use
//     until the next throttle (1,000/s is found in well under a second); responses to requests
//     sent before that cut's epoch teach nothing, so a window that the unpaced burst used up
//     reads as a blackout, not as a rate.
//   - A quota that comes back whole is learned without headers too (adaptive_cycle.go). A fixed
//     window or a sliding log answers the unpaced start with a burst of its whole quota and then
//     a wall of throttles until the quota is back. The limiter takes that as "S per P" and sends
//     in cycles: at the first success after the wall, the rest of the quota at once, then nothing
//     until P has passed; it narrows P down from the throttles and successes at the cycles'
//     starts, looks for a larger quota every fourth cycle, and leaves a short gap before every
//     fourth cycle so that other clients on the key can show. An even pace would take 10 s where
//     the cycles take 9 (2,000 requests at 200 per second). A first cycle that is throttled
//     early (a window counter, a bucket), a Retry-After or a rate-limit header, throttles after
//     the gap, or repeated walls end the cycles for good, and the control law paces the key.
//
// Requests in flight are accounted for: the remaining quota is counted less the requests the
// server has not seen yet, and a throttle for a request sent before the last cut does not cut
// again. Limiters that share a server converge towards equal shares: cuts are proportional to
// the rate and growth is not (linear in the declared rate, or sublinear in the rate).
//
// Claims are clamped (WithRateBounds), malformed fields ignored (the codec skips them), a
// remaining count is capped by the declared quota and its spread by four times the current
// rate, and a server that throttles more requests than it admits (four or more) while declaring
// a rate is not believed any more. Learned state is a few numbers and fixed-size rings (O(1) memory per
// limiter); while the key is quiet it decays (WithDecayHalfLife), computed from now on the next
// Reserve, with no goroutine.
//
// Pacing is exact: integer nanoseconds, one request per interval, and no burst beyond the
// allowance. When the rate or the allowance changes, the requests already waiting are scheduled
// again and told through Reservation.Changed, keeping their order; cancelling a waiting reservation moves the ones behind
// it up. Reserve never refuses: the number of waiting requests is bounded by the callers (the
// queue in front of the throttle).
//
// An Adaptive limiter is safe for concurrent use. It starts no goroutines and needs no Close.
type Adaptive struct {
	cfg adaptiveConfig

	mu      sync.Mutex
	started bool
	base    time.Time
	now     int64 // the latest time seen, on the integer clock (kept monotonic)
	// lastWait is when a reservation last had to wait: the pace, not the caller, set the rate.
	lastWait int64

	pacer pacer
	sends sendRing
	hist  history
	ctl   control
	allow allowance
	guess windowGuess
	cyc   windowCycles
}

var _ Learner = (*Adaptive)(nil)

// NewAdaptive returns an Adaptive limiter configured by opts. Options that are nil are skipped.
// It returns an error matching ErrInvalidRate or ErrInvalidOption for an unusable option.
func NewAdaptive(opts ...AdaptiveOption) (*Adaptive, error) {
	c := defaultAdaptiveConfig()
	var errs []error
	for _, o := range opts {
		if o != nil {
			if err := o.applyAdaptive(&c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if c.initialRate < c.minRate || c.initialRate > c.maxRate {
		return nil, fmt.Errorf("%w: initial rate %v outside the bounds [%v, %v]", ErrInvalidRate, c.initialRate, c.minRate, c.maxRate)
	}
	a := &Adaptive{cfg: c}
	a.pacer.sent = a.markSent
	a.ctl.init(&a.cfg)
	a.cyc.maxRate = c.maxRate
	a.pacer.interval = intervalOf(a.ctl.pace)
	return a, nil
}

// AdaptiveFactory returns a limiter factory for WithLimiter that gives every key its own Adaptive
// limiter configured by opts, so each host (or whatever the key function picks) is learned
// separately. The options are checked once, here: an invalid option makes every call of the
// factory return the error. The factory is safe for concurrent use.
//
//	th, err := throttle.New(throttle.WithLimiter(throttle.AdaptiveFactory()))
func AdaptiveFactory(opts ...AdaptiveOption) func(key string) (Limiter, error) {
	if _, err := NewAdaptive(opts...); err != nil {
		return func(string) (Limiter, error) { return nil, err }
	}
	return func(string) (Limiter, error) { return NewAdaptive(opts...) }
}

// clock converts now to the integer clock, never going back; a.mu is held.
func (a *Adaptive) clock(now time.Time) int64 {
	if !a.started {
		a.started, a.base = true, now
	}
	if t := int64(now.Sub(a.base)); t > a.now {
		a.now = t
	}
	return a.now
}

// markSent is called by the pacer, in order, for each request that comes due; a.mu is held.
func (a *Adaptive) markSent(slot int64) {
	a.sends.push(slot)
	a.allow.sent()
	a.hist.sent(slot, a.pacer.interval)
	a.cyc.noted(slot)
}

// Reserve books one request at now. It never fails.
func (a *Adaptive) Reserve(now time.Time) (Reservation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.clock(now)
	if changed, forgot := a.ctl.decay(t); changed {
		if forgot {
			a.sends.reset()
			a.hist.reset()
			a.allow = allowance{}
			a.guess = windowGuess{}
			a.cyc = windowCycles{maxRate: a.cfg.maxRate}
			a.pacer.burst, a.pacer.hold = 0, 0
		}
		a.setPace(t)
	}
	a.ctl.lastActive = t
	if r := a.pacer.reserve(a, t); r != nil {
		a.lastWait = t
		return r, nil
	}
	return dueReservation{}, nil
}

// Observe learns from the outcome of one request this limiter let through (see Learner). A
// transport error teaches nothing about the rate; a response teaches from its status and its
// rate-limit headers.
func (a *Adaptive) Observe(now time.Time, resp *http.Response, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.clock(now)
	a.pacer.settle(t)
	a.ctl.lastActive = t
	sent, known := a.sends.pop(t - a.ctl.sendHorizon())
	if !known {
		sent = t
	}
	a.ctl.observeRTT(t - sent)
	if err != nil || resp == nil {
		return
	}
	info := ratelimitheader.Parse(resp.Header, now)
	throttled := a.isThrottle(resp.StatusCode)
	a.guess.fill(&info, throttled)
	if !throttled {
		a.hist.success(t)
	}
	inflight := a.sends.len()
	if a.ctl.distrust {
		a.allow.distrust = true // a server whose declared rate is not believed
	}
	headers := info.Limit > 0 || info.HasRemaining
	var dec allowanceDecision
	if !headers && a.cyc.guessing() {
		// The window cycles (adaptive_cycle.go) grant and hold for a server without headers.
		dec = allowanceDecision{burst: a.pacer.burst}
	} else if throttled && known && a.ctl.sentUnpaced(sent) {
		// Drawn by the unpaced start (sent before the first signal): it says nothing of
		// whether the remaining counts can be believed. (Its Retry-After pauses the key.)
		dec = allowanceDecision{burst: a.pacer.burst}
	} else {
		dec = a.allow.observe(t, sent, known, throttled, info, inflight, a.pacer.burst)
	}
	busy := a.pacer.pending > 0 || t-a.lastWait <= 2*a.pacer.interval
	a.ctl.observe(t, sent, throttled, info, inflight, busy, a.allow.active(), &a.hist)
	a.setPace(t)
	if dec.setHold {
		a.pacer.setHold(t, dec.hold)
	}
	a.pacer.grant(t, dec.burst)
	var cd cycleDecision
	if headers {
		cd = a.cyc.headers()
	} else {
		cd = a.cyc.observe(t, sent, throttled, info.HasRetryAfter, a.sends.since)
	}
	if cd.act {
		if cd.dropped > 0 {
			a.ctl.cyclesDropped(t, cd.dropped)
			a.setPace(t)
		}
		a.pacer.setHold(t, cd.hold)
		a.pacer.grant(t, cd.grant)
	}
	a.hist.paces.note(t, a.ctl.pace)
}

// isThrottle reports whether status is one of the throttle statuses.
func (a *Adaptive) isThrottle(status int) bool {
	for _, s := range a.cfg.statuses {
		if s == status {
			return true
		}
	}
	return false
}

// setPace brings the pacer in line with the control state at t; a.mu is held. Waiting requests
// are scheduled again only when their spacing changed noticeably, so that a stream of
// small adjustments does not wake every waiter on every response.
func (a *Adaptive) setPace(t int64) {
	iv := intervalOf(a.ctl.pace)
	p := &a.pacer
	moved := false
	if d := iv - p.interval; d > p.interval/100 || -d > p.interval/100 || (iv == 0) != (p.interval == 0) {
		moved = true
	}
	p.interval = iv
	if moved && p.head != nil {
		p.reschedule(t)
	}
}

// intervalOf converts a rate in requests per second into the pacer's interval in nanoseconds.
func intervalOf(perSec float64) int64 {
	if !(perSec > 0) || math.IsInf(perSec, 0) {
		return 0
	}
	iv := math.Round(1e9 / perSec)
	if iv > math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return int64(iv)
}

// Rate reports the pace the limiter currently keeps, in requests per second; 0 while it paces
// nothing (responses came back without any signal, see Adaptive). While it sends a learned quota
// in window cycles, it is that quota per period.
func (a *Adaptive) Rate() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rate()
}

// rate is Rate; a.mu is held.
func (a *Adaptive) rate() float64 {
	if q, p := a.cyc.learned(); q > 0 && p > 0 {
		return float64(q) / p.Seconds()
	}
	return a.ctl.pace
}

// AdaptiveStats is a snapshot of what an Adaptive limiter has learned and seen.
type AdaptiveStats struct {
	// Rate is the pace the limiter keeps, in requests per second (see Adaptive.Rate); 0 while it
	// paces nothing.
	Rate float64
	// ServerRate is the rate the server declared in its headers (RateLimit-Policy, or
	// X-RateLimit-Limit with a window), limit per window clamped to the maximum rate; 0 when none
	// was seen, or when the server throttled more than it admitted and is not believed.
	ServerRate float64
	// Estimate is the rate of successes measured at the last throttle, the limiter's estimate of
	// what the server admits when it does not say; 0 before the first throttle.
	Estimate float64
	// Successes counts responses that were not throttles; Throttles counts throttled responses
	// (WithThrottleStatuses, and successes saying nothing is left); Cuts counts the rate cuts
	// they caused (at most one per epoch).
	Successes, Throttles, Cuts int64
	// Allowance is how many requests may go at once, without waiting for the pace, because the
	// server said that much of its quota remains (see NewAdaptive), or because a learned window
	// quota came back (WindowQuota); 0 when there is none, when it is spent, or when the
	// remaining count is not believed.
	Allowance int64
	// InFlight is the number of requests sent whose response has not been observed yet.
	InFlight int
	// Waiting is the number of reservations waiting for their time.
	Waiting int
	// WindowQuota and WindowPeriod are the quota that comes back whole, and how long it takes,
	// that the limiter learned from a server that sends no rate-limit header (a fixed window or a
	// sliding log: see Adaptive); 0 while it has learned none.
	WindowQuota  int64
	WindowPeriod time.Duration
}

// Stats returns a snapshot of the limiter's state.
func (a *Adaptive) Stats() AdaptiveStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &a.ctl
	q, p := a.cyc.learned()
	return AdaptiveStats{
		Rate:         a.rate(),
		WindowQuota:  q,
		WindowPeriod: p,
		ServerRate:   c.declared,
		Estimate:     c.est,
		Successes:    c.successes,
		Throttles:    c.throttles,
		Cuts:         c.cuts,
		Allowance:    a.pacer.burst,
		InFlight:     a.sends.len(),
		Waiting:      a.pacer.pending,
	}
}
