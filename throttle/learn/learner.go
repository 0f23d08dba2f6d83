package learn

import (
	"errors"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/internal/pacer"
	"github.com/steadyhttp/steady/throttle"
)

// Learner is a throttle.Limiter that learns one key's rate limit from the responses it observes
// and paces the key's requests by it, in FIFO order. It implements throttle.AttemptLearner.
//
// What it believes, what moves each belief, and which strategy is in charge when are described in
// docs/learner.md; in short, one strategy drives the pacer at a time, in this precedence:
//
//  1. pause: a Retry-After is running: nothing goes until it ends;
//  2. declared: the server's headers are believed: spend what remains, then pace at the declared
//     rate, or hold until the reset of a quota that comes back whole;
//  3. cycles: no believed header, a quota that comes back whole evident: send it at once at each
//     cycle's start, then hold until the next;
//  4. rate: no believed header and throttles seen: pace at an estimate of what the server admits,
//     with the share of throttled attempts bounded by construction;
//  5. startup: nothing said yet: no pace, the requests in flight capped by a slow start.
//
// A Learner is safe for concurrent use, starts no goroutine and needs no Close. Create it with
// New; the zero value is not usable.
type Learner struct {
	cfg config

	mu      sync.Mutex
	started bool
	base    time.Time
	now     int64

	m      model
	p      *pacer.Pacer
	strats []strategy
	cur    strategy
	credit bool   // the strategy in charge set a credit
	sig    Signal // the answer being observed
	// quotas stores the quotas of the answer being read (dialects.ReadInto): an answer that declares
	// up to len(quotas) of them, as most do on every response, allocates nothing.
	quotas [4]dialects.Quota
	// steady is set when the plan in force stays as it is through answers that say nothing
	// (Signal.quiet) and that every strategy observes without an event: the arbiter then has
	// nothing to re-apply (see arbitrate).
	steady bool
}

var (
	_ throttle.AttemptLearner  = (*Learner)(nil)
	_ throttle.LatenessLearner = (*Learner)(nil)
	_ throttle.CostReserver    = (*Learner)(nil)
)

// New returns a Learner configured by opts, or an error matching ErrInvalidOption.
func New(opts ...Option) (*Learner, error) {
	c := defaultConfig()
	var errs []error
	for _, o := range opts {
		if o != nil {
			if err := o.apply(&c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	l := &Learner{cfg: c}
	l.m.tun = c.tun
	l.m.maxPause = -1
	if c.hasMaxPause {
		l.m.maxPause = int64(c.maxPause)
	}
	l.m.share = 1
	d := &declaredStrategy{leastLeft: -1}
	cyc := &cyclesStrategy{}
	l.p = pacer.New(&l.mu, l.clock, func(slot, cost int64) {
		l.m.sends.add(slot, cost, d.current(&l.m), d.currentUpper(&l.m), int64(l.p.InFlight()-1))
		cyc.sent(slot)
	})
	l.strats = []strategy{
		pauseStrategy{},
		d,
		cyc,
		&rateStrategy{minR: c.minRate, maxR: c.maxRate},
		startupStrategy{},
	}
	l.arbitrate(0, time.Time{})
	return l, nil
}

// Factory returns a limiter factory for throttle.WithLimiter that gives every key its own Learner,
// named after the key. The options are checked once, here: an invalid one makes every call fail
// with its error. The factory is safe for concurrent use.
func Factory(opts ...Option) func(key string) (throttle.Limiter, error) {
	if _, err := New(opts...); err != nil {
		return func(string) (throttle.Limiter, error) { return nil, err }
	}
	return func(key string) (throttle.Limiter, error) {
		return New(append(opts[:len(opts):len(opts)], WithKey(key))...)
	}
}

// clock converts now to the integer clock, never going back; l.mu is held.
func (l *Learner) clock(now time.Time) int64 {
	if !l.started {
		l.started, l.base = true, now
	}
	if t := int64(now.Sub(l.base)); t > l.now {
		l.now = t
	}
	return l.now
}

// Reserve books one request of cost 1 at now. It never fails.
func (l *Learner) Reserve(now time.Time) (throttle.Reservation, error) { return l.ReserveN(now, 1) }

// ReserveN books one request that costs cost units at now (throttle.CostReserver; a cost below 1
// counts as 1): it goes when both the requests quota and the units quota the server declared
// (tokens, points; see docs/learner.md) have room for it, whichever is the tighter. It never fails.
func (l *Learner) ReserveN(now time.Time, cost int64) (throttle.Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.p.Reserve(l.clock(now), max(cost, 1)); r != nil {
		return r, nil
	}
	return due{}, nil
}

// Observe learns from an attempt whose send time is not known (see ObserveAttempt): it is taken
// to have left one smoothed round trip before now.
func (l *Learner) Observe(now time.Time, resp *http.Response, err error) {
	l.ObserveAttempt(time.Time{}, now, resp, err)
}

// Resume ends the hold of the server's last Retry-After (throttle.Resumer: Throttle.Resume calls it
// when the key's pause is ended by hand); the strategy that drove before it drives again from now.
// It is safe for concurrent use.
func (l *Learner) Resume(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.clock(now)
	if l.m.pauseUntil <= t {
		return
	}
	l.m.pauseUntil = t // it ends now: nothing is measured across the part held (pauseEndedBy)
	l.emit(now, "pause: resumed by hand")
	l.arbitrate(t, now)
}

// ObserveLateness records how late the waiter of one of its reservations woke
// (throttle.LatenessLearner): the sender's own jitter, which widens the jitter margin (the reserve
// a refilling quota keeps, the requests counted as unseen, the lateness of holds). It is safe for
// concurrent use.
func (l *Learner) ObserveLateness(now time.Time, late time.Duration) {
	l.mu.Lock()
	if int64(late) > l.m.rtt.margin(l.m.tun.JitterMargin) {
		// Later than the sender's usual lateness (which the headroom and the estimate absorb):
		// the request goes now, and the ones behind it follow it no closer than the server's
		// burst allows (see plan.burst). Every wake counted would add each one's scheduler
		// delay to the spacing, a fifth of it at 1,000/s.
		l.p.Went(l.clock(now))
	}
	l.m.rtt.addLate(int64(late))
	l.mu.Unlock()
}

// ObserveAttempt learns from one attempt that left at sent and whose outcome came back at now.
func (l *Learner) ObserveAttempt(sent, now time.Time, resp *http.Response, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.clock(now)
	l.p.Settle(t)
	m := &l.m
	m.inFlight = max(l.p.InFlight()-1, 0) // this attempt is answered; the pacer hears it last
	var ts int64
	if sent.IsZero() {
		ts = t - m.rtt.srtt
	} else {
		ts = min(int64(sent.Sub(l.base)), t)
		m.rtt.add(t, t-ts)
	}
	// The signal lives in the Learner (guarded by mu): handed to the strategies through an
	// interface, a local one would escape to the heap on every answer.
	sig := &l.sig
	sig.read(ts, t, now, resp, err, l.cfg.statuses, l.cfg.dialects, l.quotas[:])
	if !sig.Failed {
		if sig.Throttled {
			m.throttles++
		} else {
			m.successes++
			m.succ.add(t)
		}
	}
	changed := false
	if ev := m.units.observe(sig, m); ev != "" {
		l.emit(now, "units: "+ev)
		changed = true
	}
	for _, s := range l.strats {
		if ev := s.observe(t, sig, m); ev != "" {
			l.emit(now, s.name()+": "+ev)
			changed = true
		}
	}
	// The steady state: an answer that says nothing, observed without an event, leaves a steady
	// plan as it is (the same strategy drives, with the same pace, hold, credit and cap), so
	// there is nothing to re-apply.
	if changed || !l.steady || !sig.quiet() {
		l.arbitrate(t, now)
	}
	if sig.Throttled && !sent.IsZero() {
		// The window of sends counts what the server admits: the refused one took no place
		// (Pacer.Refused). After the plan, which may have set the window just now, from the
		// sends this one is among.
		l.p.Refused(t, ts, m.rtt.margin(m.tun.JitterMargin))
	}
	// Only now is the place in flight freed: a request that waited for it goes at the pace the
	// answer just set, not at the one before it.
	l.p.Answered(t)
}

// arbitrate puts the first strategy that can drive in charge and applies its plan; a running
// pause overlays its hold on the plan of the strategy that drives after it. l.mu is held.
func (l *Learner) arbitrate(t int64, now time.Time) {
	m := &l.m
	var chosen strategy
	paused := false
	for _, s := range l.strats {
		if !s.drives(t, m) {
			continue
		}
		if _, ok := s.(pauseStrategy); ok {
			paused = true
			continue
		}
		chosen = s
		break
	}
	if chosen == nil {
		chosen = l.strats[len(l.strats)-1]
	}
	p := chosen.plan(t, m)
	if paused {
		p.hold = max(p.hold, m.pauseUntil)
	}
	m.driver = chosen.name()
	if chosen != l.cur {
		prev := "none"
		if l.cur != nil {
			prev = l.cur.name()
		}
		l.cur = chosen
		if !now.IsZero() {
			l.emit(now, "in charge: "+prev+" -> "+chosen.name())
		}
	}
	// The plan goes in as one: a request waiting now is placed under the whole new plan, never
	// under its spacing with the old hold.
	l.p.Begin()
	defer l.p.Commit(t)
	l.p.SetInterval(t, pacer.LaneRequests, p.interval)
	// The units quota meters every strategy's plan: its pace per unit, and its credit bounding
	// the requests credit's burst by their costs.
	l.p.SetInterval(t, pacer.LaneUnits, m.units.interval(m))
	uc := m.units.creditNow(m)
	if uc != l.p.UnitCredit() {
		l.p.GrantUnits(t, uc)
	}
	l.p.SetHold(t, p.hold)
	l.p.SetCatchUp(p.burst - 1) // -1 (unbounded) when the burst is not known
	cw := l.capWait()
	if p.capWait > 0 {
		cw = time.Duration(p.capWait)
	}
	l.p.SetMaxInFlight(t, p.maxInFlight, cw)
	var recent []int64
	if p.windowLimit != l.p.WindowLimit() {
		recent = m.sends.latest(int64(p.windowLimit)) // only a new limit seeds the window from them
	}
	l.p.SetWindow(t, p.windowLimit, p.window, p.windowSlack, recent)
	switch {
	case p.setCredit:
		if p.credit != l.p.Credit() {
			l.p.Grant(t, p.credit)
		}
	case l.credit:
		l.p.Grant(t, 0)
	}
	l.credit = p.setCredit
	// Steady: no pause overlaid (its end would lift the hold), no units credit (it moves with
	// every send), and a strategy whose plan holds through quiet answers. No strategy ahead of it
	// in the precedence takes over on a quiet answer without an event: the pause needs a
	// Retry-After, the declared strategy headers, the cycles a wall of throttles.
	l.steady = false
	if s, ok := chosen.(steadyStrategy); ok && !paused && uc < 0 && !p.setCredit && p.windowLimit == 0 && p.maxInFlight == 0 {
		l.steady = s.steady(m)
	}
}

// capWait is how long a request held back by the startup's cap waits for an answer at most: two
// smoothed round trips (an answer later than that is late, not slow), or a second before any
// round trip was measured (the granularity of the rate limits APIs state).
func (l *Learner) capWait() time.Duration {
	if !l.m.rtt.seen {
		return time.Second
	}
	return time.Duration(max(2*l.m.rtt.srtt, int64(time.Millisecond)))
}

// Rate reports the pace the learner keeps, in requests per second: the spacing of its pacer, or,
// while it sends a quota in cycles, the quota per period; 0 while it does not pace (before the
// server said anything). It is safe for concurrent use.
func (l *Learner) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate()
}

// ServerRate reports the rate, in requests per second, that the learner believes the server allows
// its key (throttle.ServerRater): while declared headers drive, the declared rate before the share
// the learner leaves to other clients on the key (Rate less that share); otherwise, and where the
// rate is the dialect's assumption rather than the server's word (Shopify's call limit, whose
// share halvings follow a bucket that leaks slower than assumed), Rate. The throttle's max wait
// judges a pace by it: a share halved on a collision is the learner's guess of other clients, no
// wait the server asked for. It is safe for concurrent use.
func (l *Learner) ServerRate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cur.(*declaredStrategy); ok && !l.m.rateAssumed {
		if iv := l.m.serverInterval(); iv > 0 {
			return 1e9 / iv
		}
	}
	return l.rate()
}

// rate is Rate, with mu held.
func (l *Learner) rate() float64 {
	if c, ok := l.cur.(*cyclesStrategy); ok && c.hi > 0 {
		return float64(c.quota) * 1e9 / float64(c.nextOffset()) // a quota per period
	}
	if iv := l.p.Interval(pacer.LaneRequests); iv > 0 {
		return 1e9 / float64(iv)
	}
	return 0
}

// Limit is what a Learner believes of its server's limit.
type Limit struct {
	// Quota requests per Window; both 0 when nothing is believed yet. For a bucket whose headers
	// say its level but not its rate (Shopify's call limit), Quota is the capacity and Window the
	// time it takes to leak it, as measured once faster than the dialect assumed.
	Quota  int64
	Window time.Duration
	// Kind is how the quota comes back, as far as the evidence shows.
	Kind Kind
	// Source is where the belief comes from: "declared" (the server's headers, believed),
	// "estimated" (throttles and successes, no header believed), or "" when there is none.
	Source string
	// Confidence is how sure the learner is, from 0 to 1: for declared headers, 1 less the share
	// of the contradictions that would make it distrust them; for an estimate, the share of the
	// quiet span (Tuning.ThrottleBudget) it has held without a throttle, 1 once a probe above it
	// was throttled (the limit was found from both sides).
	Confidence float64
	// Strategy and State name the strategy in charge and its state.
	Strategy, State string
}

// LearnedLimit reports what the learner believes of the server's limit. It is safe for concurrent
// use.
func (l *Learner) LearnedLimit() Limit {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := &l.m
	out := Limit{Kind: m.kind, Strategy: l.cur.name(), State: l.cur.state()}
	if m.trust == trustBelieved && m.limit > 0 {
		out.Quota, out.Window, out.Source = m.limit, time.Duration(l.strats[1].(*declaredStrategy).reportedWindow(m)), "declared"
		if li := m.leak.interval(); m.rateAssumed && li > 0 && li*m.limit < m.window {
			// A bucket whose rate was assumed and measured faster: its capacity per the time it
			// takes to leak it.
			out.Window = time.Duration(li * m.limit)
		}
		out.Confidence = 1 - float64(m.liveContradictions())/float64(m.tun.DistrustAfter)
		return out
	}
	r := l.strats[3].(*rateStrategy)
	if r.active && r.best > 0 && !math.IsInf(r.best, 0) {
		// An estimate is a rate: expressed per second, rounded down to whole requests where it
		// is at least one a second, else as one request per its spacing.
		if r.best >= 1 {
			out.Quota, out.Window = int64(r.best), time.Second
		} else {
			out.Quota, out.Window = 1, time.Duration(1e9/r.best)
		}
		out.Source = "estimated"
		out.Kind = KindRefilling
		out.Confidence = 1
		if r.st != "probe" && r.quiet > 0 {
			out.Confidence = min(1, float64(r.succ)/float64(r.quiet))
		}
	}
	return out
}

// due is a reservation that was due when it was made.
type due struct{}

func (due) Delay(time.Time) time.Duration { return 0 }
func (due) Changed() <-chan struct{}      { return nil }
func (due) Cancel(time.Time)              {}
