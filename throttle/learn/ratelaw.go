package learn

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// RateLaw is the learner's headerless law on its own: the rate strategy (docs/learner.md §3: search,
// bisect, recover, cruise, probe) and, before its first throttle, the startup's slow start expressed
// as a pace. It is what a limiter that keeps its state elsewhere runs: throttle/redisthrottle keeps
// it in Redis (MarshalBinary) so that every process behind one API key advances one law with all of
// their evidence (docs/shared-learner.md). Times are absolute (every caller of one law must use the
// same clock, as Redis's TIME); the evidence of a round trip is the caller's (ObserveRoundTrip).
//
// A RateLaw is a plain value and not safe for concurrent use: guard it, or use one per goroutine.
// Create it with NewRateLaw; the zero value is not usable.
type RateLaw struct {
	m       model
	r       rateStrategy
	initial float64
}

// NewRateLaw returns a law that paces at initial requests per second until a round trip is measured
// (see Rate). Of opts, WithTuning and WithRateBounds apply; the others concern a Learner's reading
// of responses and are ignored. It returns an error matching ErrInvalidOption for a bad option or
// an initial rate that is not positive and finite.
func NewRateLaw(initial float64, opts ...Option) (*RateLaw, error) {
	c := defaultConfig()
	var errs []error
	for _, o := range opts {
		if o != nil {
			if err := o.apply(&c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if !(initial > 0) || math.IsInf(initial, 0) {
		errs = append(errs, fmt.Errorf("%w: initial rate %v", ErrInvalidOption, initial))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	l := &RateLaw{initial: initial}
	l.m.tun = c.tun
	l.m.share = 1
	l.r = rateStrategy{minR: c.minRate, maxR: c.maxRate}
	return l, nil
}

// ObserveRoundTrip measures one round trip of the caller's: an attempt that left at sent and was
// answered at answered (smoothed as the Learner smooths its own: TCP's SRTT and RTTVAR). The round
// trip is the caller's, not part of the encoded state (UnmarshalBinary keeps it): it sets the jitter
// margin (which throttles belong to the last cut), the startup's pace and, with the pace, the
// requests in flight a cut must pay for (Little's law). A zero sent, or one after answered, is
// ignored.
func (l *RateLaw) ObserveRoundTrip(sent, answered time.Time) {
	if sent.IsZero() || sent.After(answered) {
		return
	}
	l.m.rtt.add(answered.UnixNano(), int64(answered.Sub(sent)))
}

// RoundTrip is the smoothed round trip measured so far (0 before the first).
func (l *RateLaw) RoundTrip() time.Duration { return time.Duration(l.m.rtt.srtt) }

// Admit applies n successes answered at at (n <= 0 does nothing). It returns the events they caused,
// in order (nil for none).
func (l *RateLaw) Admit(at time.Time, n int64) []string {
	var evs []string
	t := at.UnixNano()
	s := Signal{Answered: t}
	for range max(n, 0) {
		s.Sent = t - l.m.rtt.srtt
		l.m.successes++
		l.m.succ.add(t)
		l.inFlight()
		if ev := l.r.observe(t, &s, &l.m); ev != "" {
			evs = append(evs, ev)
		}
	}
	return evs
}

// Throttle applies one throttled attempt that left at sent and was answered at at (a zero sent
// means one round trip before at). It returns the event it caused ("" when it belongs to the last
// cut's epoch and changes nothing).
func (l *RateLaw) Throttle(sent, at time.Time) string {
	t := at.UnixNano()
	s := Signal{Sent: t - l.m.rtt.srtt, Answered: t, Throttled: true}
	if !sent.IsZero() {
		s.Sent = min(sent.UnixNano(), t)
	}
	l.m.throttles++
	l.inFlight()
	return l.r.observe(t, &s, &l.m)
}

// inFlight sets the model's requests in flight from the pace and the round trip (Little's law): all
// the requests of every caller that the law paces.
func (l *RateLaw) inFlight() {
	l.m.inFlight = int(math.Min(math.Ceil(l.Rate()*float64(l.m.rtt.srtt)/1e9), math.MaxInt32))
}

// SetCeiling bounds the law's pace, in requests per second, below its rate bounds' maximum (0, a
// negative or an infinite value: no bound): a rate its caller is held to anyway, such as a rate the
// server declares, so that what the law learns is about paces it really sent. A pace above it
// comes down to it at once. The ceiling is the caller's, like the round trip: it is not encoded,
// and Reset keeps it.
func (l *RateLaw) SetCeiling(perSec float64) {
	if !(perSec > 0) || math.IsInf(perSec, 0) {
		perSec = 0
	}
	l.r.ceiling = perSec
	if l.r.active {
		l.r.rate = l.r.clamp(l.r.rate)
	}
}

// Reset forgets what the law learned, as a new law: it keeps its configuration and the round trip.
func (l *RateLaw) Reset() {
	l.r = rateStrategy{minR: l.r.minR, maxR: l.r.maxR, ceiling: l.r.ceiling}
	l.m.successes, l.m.throttles, l.m.succ = 0, 0, successLog{}
}

// Active reports whether the law has been throttled: from then on Rate is the rate strategy's pace;
// before, it is the startup's.
func (l *RateLaw) Active() bool { return l.r.active }

// Successes is the count of successes the law has applied.
func (l *RateLaw) Successes() int64 { return l.m.successes }

// State names the law's state: "slow-start" before the first throttle, then the rate strategy's.
func (l *RateLaw) State() string {
	if !l.r.active {
		return startupStrategy{}.state()
	}
	return l.r.state()
}

// Rate is the pace the law asks for, in requests per second. Once throttled, the rate strategy's.
// Before, the startup's cap on requests in flight (one more than the successes, so that it doubles
// every round trip) turned into the pace it allows over one round trip, (successes+1)/RTT, at least
// the initial rate, and the rate bounds' maximum once the cap would be open (startupOpen); the
// initial rate until a round trip is known; never above the ceiling (SetCeiling).
func (l *RateLaw) Rate() float64 {
	if l.r.active {
		return l.r.rate
	}
	if l.m.successes+1 >= startupOpen {
		return l.r.clamp(l.r.maxR)
	}
	if !l.m.rtt.seen || l.m.rtt.srtt <= 0 {
		return l.r.clamp(l.initial)
	}
	return l.r.clamp(max(float64(l.m.successes+1)*1e9/float64(l.m.rtt.srtt), l.initial))
}

// Estimate is the rate the law believes the server sustains, in requests per second (0 while it
// has none: before the first throttle, and while the search has not been refuted).
func (l *RateLaw) Estimate() float64 {
	if !l.r.active || math.IsInf(l.r.best, 0) {
		return 0
	}
	return l.r.best
}

// LastCut is when the law last cut its pace (the zero time before the first throttle): the next
// request goes no sooner than one spacing after it.
func (l *RateLaw) LastCut() time.Time {
	if !l.r.active {
		return time.Time{}
	}
	return time.Unix(0, l.r.cutAt)
}
