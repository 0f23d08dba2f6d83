package learn

import (
	"fmt"
	"math"
)

// rateStrategy is the headerless law: it paces at a rate it estimates from the throttles and the
// successes, and keeps the share of throttled attempts bounded by construction (Tuning.ThrottleBudget).
// States:
//
//	search    after the first throttle: from a prior (the burst the server admitted, taken as per
//	          second), the rate doubles every half measure of successes (or every run the server
//	          admitted at once, if shorter, and no sooner than the credit the server can have
//	          refilled allows: searchStep) until a throttle
//	bisect    a doubling was refuted: the rate lies between the last pace held and the one refuted;
//	          the pace tests their geometric middle until the bracket is within a probe's reach
//	recover   after a cut to Backoff times the rate the server admitted: back to just under it
//	          within a quarter of the quiet span
//	cruise    just under the rate the server admitted, for the quiet span: 1/ThrottleBudget
//	          successes, times one plus the requests that were in flight at the cut
//	probe     ProbeGain above it: a throttle cuts again; a quiet half span that also outlasted
//	          the credit the server can have refilled since the cut raises the estimate; the next
//	          probe, after a cruise, goes twice as far
type rateStrategy struct {
	st    string
	rate  float64 // pace, requests per second
	best  float64 // the highest rate the server was seen to sustain, requests per second
	cutAt int64   // time of the last cut: throttles for requests sent before it belong to it
	// cutSuccesses is the count of successes at the last cut: what the server admitted since.
	cutSuccesses int64
	// probeCredit bounds the credit the server can hold when the probe (or the search's
	// doubling) under way began, were its rate under the pace: see probeSpan and searchStep.
	probeCredit float64
	rCut        float64 // the pace right after the last cut
	succ        int64   // successes since the last cut, doubling, or test or probe start
	gain        float64 // the next probe's gain: doubles with every probe that holds
	// burst is the run of successes the server admitted before its first throttle: as many as
	// its burst (plus what refilled meanwhile), so an upper bound on what a probe can be admitted
	// from a full burst at a rate the server does not sustain.
	burst int64
	// doubled is set once the search has doubled its prior; below is the pace before the last
	// doubling (half the pace, unless the rate bounds held the doubling short).
	doubled bool
	below   float64
	// wallRate is the pace after the latest wall's halvings: the one that outlasted it (0 after
	// a cut that was no wall).
	wallRate float64
	// firstCutAt and firstCutSuccesses are the time and the success count of the first throttle.
	firstCutAt, firstCutSuccesses int64
	// hi is the lowest pace refuted while bisecting (a throttle at it): the rate is below it.
	hi float64
	// fresh is set while the test under way began at a throttle: the server had no credit left
	// then, so its burst cannot carry the test.
	fresh bool
	// cuts remembers the time and the success count at the latest cuts, to measure the rate the
	// server admitted over several epochs (see longRun).
	cuts [longRunCuts]struct{ at, successes int64 }
	ncut int64
	// epochThrottles counts the throttles of the current epoch (since the last cut): what a cut
	// costs, and so how long the next quiet span must be.
	epochThrottles int64
	quiet          int64 // successes the current quiet span lasts
	// cyclesUntil is the latest time the cycles strategy drove: requests sent until then were
	// sent in its bursts, and their answers are no evidence of a rate.
	cyclesUntil int64
	cyclesDrove bool
	minR        float64
	maxR        float64
	// ceiling, when positive, bounds the pace below maxR: a rate the caller is held to anyway (the
	// shared limiter's declared cap), so that the law never believes it sent faster than it did.
	ceiling float64
	active  bool
}

func (r *rateStrategy) name() string { return "rate" }

func (r *rateStrategy) state() string { return r.st }

func (r *rateStrategy) drives(t int64, m *model) bool { return r.active && m.trust != trustBelieved }

func (r *rateStrategy) plan(t int64, m *model) plan {
	iv := intervalOf(r.rate)
	// The first request after a cut goes one spacing after it: the requests that drew the
	// throttle emptied the server's quota, and one sent at once would only draw another. The
	// burst the server admitted before its first throttle is all the bunching it was seen to
	// take: a late request's followers close on it by no more (nginx's limit_req without a
	// burst refuses any two closer than its pace, and the requests due behind a late wake went
	// on time: at 50/s, three throttles in four were such a pair, and the cuts they caused held
	// the pace at 35-45/s).
	return plan{interval: iv, hold: r.cutAt + iv, burst: r.burst}
}

// steady: the pace and the hold after the last cut move on a success only with an event (a
// search that doubles, a cruise that turns to a probe, a probe that holds), except while
// recovering, where every success ramps the pace up.
func (r *rateStrategy) steady(m *model) bool { return r.st != "recover" }

// measured is the rate, in requests per second, the server admitted over the last
// MeasureSuccesses successes since the previous cut, if that many were seen.
func (r *rateStrategy) measured(m *model, since int64) (float64, bool) {
	perNs, ok := m.succ.rate(m.tun.MeasureSuccesses, since)
	return perNs * 1e9, ok
}

func (r *rateStrategy) clamp(x float64) float64 {
	if r.ceiling > 0 {
		return min(max(x, r.minR), r.maxR, max(r.ceiling, r.minR))
	}
	return min(max(x, r.minR), r.maxR)
}

func (r *rateStrategy) observe(t int64, s *Signal, m *model) string {
	if m.driver == "cycles" {
		// While the cycles send in bursts, the spacing of successes says nothing of a rate:
		// the law waits, as it was, until they are refuted; and the answers to what the cycles
		// sent, arriving after, are theirs too.
		r.cyclesUntil, r.cyclesDrove = t, true
		return ""
	}
	if m.trickled {
		// The quota trickled back after the wall (the cycles' test): the server refills, and
		// a wall means the estimate is far over its rate (a prior of a burst per second against
		// 100 a minute). The way back up starts from the pace that outlasted the wall: snapped
		// back to the cut before it, the pace walls again on the next success and costs a
		// wall's throttles per tenth it comes down; ramped, it meets the rate on the way, and
		// the throttle there bounds the estimate. (A window's wall is its silence, not its
		// rate: without the test's verdict the pace goes straight back.)
		// That pace is the wall's last halving, or, when the rate strategy has not halved yet
		// (the cycles saw the wall first), the rate the server admitted since the first
		// throttle: over-driven all along, a bucket admits its rate (and one unit) in that time.
		m.trickled = false
		if r.active && r.st != "search" && r.st != "bisect" {
			from := r.wallRate
			if since := float64(t-r.firstCutAt) / 1e9; from <= 0 && since > 0 {
				from = float64(m.successes-r.firstCutSuccesses) / since
			}
			if from = r.clamp(min(from, r.rate)); from > 0 {
				r.st, r.rCut, r.rate, r.succ = "recover", from, from, 0
				// A new epoch: the test's burst spent what had come back, so the first request
				// goes a spacing of the new pace later, and a throttle for one sent sooner is
				// the test's, not a refutation of that pace (taken as one, it set the estimate
				// to the wall's last halving, a twentieth of a 100/min counter's rate: 19x).
				r.cutAt, r.cutSuccesses = t, m.successes
			}
		}
	}
	if s.Failed || (m.trust == trustBelieved && s.headers()) || (r.cyclesDrove && s.Sent <= r.cyclesUntil) {
		return ""
	}
	if s.Throttled {
		r.epochThrottles++
		if r.active && (s.Sent <= r.cutAt+m.rtt.margin(m.tun.JitterMargin) || s.Sent < r.cutAt+intervalOf(r.rate)) {
			// In flight when the last cut was made: the same epoch. So is one that left before
			// the cut's hold ended (plan: the first request after a cut goes a spacing after it,
			// at the earliest, and the pace only rises until the next cut, so no request this law
			// released since left sooner; a ceiling set below the pace (RateLaw.SetCeiling) widens
			// the hold after the fact, and a throttle it hides costs one more) or within the
			// jitter margin after the cut: one was booked
			// before the cut and left late, as a loaded host's senders do, by tens of
			// milliseconds. Its answer would cut the search's first step, and the estimate with
			// it, to the burst: three processes sharing a law against 100/s, their senders late
			// behind busy CPUs, took a throttle 4 ms after the first for a refutation of the
			// prior (4/s, the run the startup had counted) and cruised at 4/s, a quiet span of
			// 100 successes per probe of 5%.
			return ""
		}
		return r.cut(t, m)
	}
	if !r.active {
		return ""
	}
	r.succ++
	switch r.st {
	case "search":
		// The search doubles every half measure of successes, or every run the server admitted
		// at once if that is shorter: the throttle that cut emptied its credit, and a server that
		// holds a run of b refutes a pace above its rate within about b sends, so b successes
		// confirm a pace as well as more would. A server with a burst of one (nginx's limit_req
		// without burst) is thus searched a success a step: from the prior of one a second,
		// doubling every four took eight seconds to reach 64/s (1.81x at 50/s; 1.24x now). But
		// never sooner than the credit the server refilled since the cut allows (searchStep).
		// A doubling the bounds refuse is none: a throttle at the bound refutes the bound itself.
		if r.succ >= r.searchStep(m) && r.clamp(2*r.rate) > r.rate {
			r.below, r.rate, r.doubled, r.succ = r.rate, r.clamp(2*r.rate), true, 0
			r.probeCredit = r.creditSinceCut(t, m, r.below)
			return fmt.Sprintf("search: %.3g/s", r.rate)
		}
	case "bisect":
		if r.succ >= r.bisectSpan(m) {
			// The server sustained the middle: it is the new lower end of the bracket.
			r.best, r.succ, r.fresh = r.rate, 0, false
			if r.narrow(m) {
				r.st = "cruise"
				r.quiet = r.quietSpan(m)
				r.rate = r.clamp(r.best * (1 - m.tun.Headroom))
				return fmt.Sprintf("bisect: held %.3g/s (refuted %.3g/s) -> cruise", r.best, r.hi)
			}
			r.rate = r.clamp(math.Sqrt(r.best * r.hi))
			return fmt.Sprintf("bisect: held %.3g/s -> test %.3g/s (refuted %.3g/s)", r.best, r.rate, r.hi)
		}
	case "recover":
		target := r.best * (1 - m.tun.Headroom)
		ramp := max(r.quiet/4, 1)
		if r.succ >= ramp {
			r.rate, r.st = r.clamp(target), "cruise"
			return fmt.Sprintf("recover -> cruise at %.3g/s", r.rate)
		}
		r.rate = r.clamp(r.rCut + (target-r.rCut)*float64(r.succ)/float64(ramp))
	case "cruise":
		if r.succ >= r.quiet && r.clamp(r.best*(1+max(r.gain, m.tun.ProbeGain))) <= r.best {
			// The estimate is at the bounds: there is nothing above it to probe.
			r.succ = 0
		} else if r.succ >= r.quiet {
			r.st, r.succ = "probe", 0
			r.gain = max(r.gain, m.tun.ProbeGain)
			r.rate = r.clamp(r.best * (1 + r.gain))
			// The credit a probe might live on without the rate to sustain it.
			r.probeCredit = r.creditSinceCut(t, m, r.rate)
			return fmt.Sprintf("cruise -> probe at %.3g/s", r.rate)
		}
	case "probe":
		if r.succ >= r.probeSpan() {
			// The server took the probe: the estimate rises to it, and the next probe goes twice
			// as far (a limit far above the estimate is found in a logarithmic number of probes),
			// after a cruise. (Chained at once, the probes made one of two clients on a key climb
			// while the other backed off: the increase must stay slower than the cut for shares
			// to converge.)
			r.best = r.rate
			r.gain *= 2
			r.st, r.succ = "cruise", 0
			r.rate = r.clamp(r.best * (1 - m.tun.Headroom))
			return fmt.Sprintf("probe held: estimate %.3g/s -> cruise", r.best)
		}
	}
	return ""
}

// searchStep is how many successes the search's pace must draw before it doubles: a run the
// server admitted at once, at most half a measure (see observe), and long enough to have spent
// the credit the server may hold had its rate been no more than the pace before the doubling
// (what the step refutes): a pace p over a rate e overdraws by 1-e/p a success, so c units (the
// first taken by the first success) carry it 1 + (c-1)·p/(p-e) successes, 2c-1 at e = p/2; the
// credit is what such a rate can have refilled since the cut, at most the burst (probeCredit, set
// at the doubling). A burst of one holds no credit beyond the unit a success takes: its search
// still doubles every success, and its next send refutes a pace the credit carried. The search
// starts at a throttle, from no credit, but its first paces are under the rate of a server whose
// burst was their prior, and the server refills meanwhile: against 100/s with a burst of 10,
// doubling every four successes from 9/s outran the refilled credit to 1,150/s, held 480/s, and
// came down at a tenth per throttle (36-44 throttles of 1,000 requests; 17-25 since).
func (r *rateStrategy) searchStep(m *model) int64 {
	step := min(max(r.burst, 1), int64(max(m.tun.MeasureSuccesses/2, 1)))
	if over := r.rate - r.below; r.doubled && over > 0 {
		step = max(step, int64(math.Min(math.Floor(max(r.probeCredit-1, 0)*r.rate/over), math.MaxInt32-1))+1)
	}
	return step
}

// creditSinceCut bounds the credit a server whose rate is under rate (requests per second) holds
// at t: it was empty at the last cut, has refilled at most rate per second since, less what it
// admitted, and holds no more than the burst it showed at first.
func (r *rateStrategy) creditSinceCut(t int64, m *model, rate float64) float64 {
	since := float64(t-r.cutAt) / 1e9
	return min(float64(r.burst), max(rate*since-float64(m.successes-r.cutSuccesses), 0))
}

// probeSpan is how many successes a probe must draw before it holds: half a quiet span, and long
// enough to have spent the credit the server may hold had the estimate been its rate. A probe at p
// over an estimate e overdraws a bucket refilling at e by 1-e/p a success, so it takes
// (credit+1)·p/(p-e) successes to be sure the server's rate, not its credit, admitted them; a
// shorter probe that holds raises the estimate above a rate the server never sustained, and the
// cruise after it pays. The credit is what the server can have refilled since the last cut, at
// most its first burst (probeCredit): bounded by the burst alone, a probe over a limit that rose
// after a cut would have to outlast the whole first burst (42,000 successes for a +5% probe at
// 2,000/s), and a server whose rate came back never has it found.
func (r *rateStrategy) probeSpan() int64 {
	span := max(r.quiet/2, 1)
	if over := r.rate - r.best; over > 0 && !math.IsInf(r.best, 0) {
		span = max(span, int64(math.Min(math.Ceil((r.probeCredit+1)*r.rate/over), math.MaxInt32)))
	}
	return span
}

// narrow reports whether the bracket [best, hi) is within a probe's reach: the cruise and its
// probes take it from there.
func (r *rateStrategy) narrow(m *model) bool {
	return r.hi <= r.best*(1+2*m.tun.ProbeGain)
}

// bisectSpan is how many successes a bisection's test must draw before it holds. Held, the pace p
// becomes the bracket's lower end, so the test must rule out a rate below it carried by credit the
// server held at the test's start: a pace p over a rate e overdraws by 1-e/p a success, so c units
// of credit carry it at most c·p/(p-e) successes. A test that began at a throttle starts with less
// than one unit; one that follows a test held may start with the server's whole burst. And at least
// 2/ProbeGain successes: with one unit of slack that proves the rate within half a probe's gain of
// p (a rate e with (1-e/p)·2/ProbeGain >= 1 throttles it), so the bracket the cruise inherits is
// not wider than it says.
func (r *rateStrategy) bisectSpan(m *model) int64 {
	credit := float64(r.burst + 1)
	if r.fresh {
		credit = 1
	}
	span := math.Ceil(2 / m.tun.ProbeGain)
	if over := r.rate - r.best; over > 0 {
		span = max(span, math.Ceil(credit*r.rate/over))
	}
	return int64(min(span, math.MaxInt32))
}

// quietSpan is the successes the cruise lasts after an epoch: the throttles it cost are then a
// ThrottleBudget share of the successes, counting at least the one that cut and the requests in
// flight with it.
func (r *rateStrategy) quietSpan(m *model) int64 {
	cost := max(1+int64(m.inFlight), r.epochThrottles)
	r.epochThrottles = 0
	return int64(math.Ceil(float64(cost) / m.tun.ThrottleBudget))
}

// cut reacts to the first throttle of an epoch.
func (r *rateStrategy) cut(t int64, m *model) string {
	// Not across a pause the server asked for: the answers in flight when it began and those
	// after it are a pause apart, and eight of them across a second's pause measured 7/s against
	// HAProxy's 100/s (whose 429s said "Retry-After: 1").
	meas, ok := r.measured(m, max(r.cutAt, m.pauseEndedBy(t)))
	prev := r.st
	switch {
	case !r.active:
		// The first throttle: the server admitted a burst of m.successes; take that as per
		// second (the smallest window APIs state limits in) and search upwards from it.
		r.active, r.st = true, "search"
		r.burst = m.successes
		r.firstCutAt, r.firstCutSuccesses = t, m.successes
		r.rate = r.clamp(float64(max(m.successes, 1)))
		r.best = math.Inf(1)
		r.cutAt, r.cutSuccesses, r.succ = t, m.successes, 0
		return fmt.Sprintf("first throttle after %d success(es): search from %.3g/s (the run per second), first doubling after %d success(es)",
			m.successes, r.rate, min(max(r.burst, 1), int64(max(m.tun.MeasureSuccesses/2, 1))))
	case r.st == "search" || r.st == "bisect":
		// The last rate that drew no throttle: the one before the last doubling, or, when the
		// prior itself drew it, the prior (it was admitted until now: the throttle says the limit
		// is at it, not below it). A bisection's lower end was held.
		refuted := r.rate
		// A test refuted costs its throttle and the requests in flight at its pace, p·RTT: the
		// bisection runs only while that is at most one more, the cost of the probe it saves
		// (at a pace that keeps more in flight the cruise and its probes take the bracket up,
		// one quiet span at a time, within the ThrottleBudget).
		cheap := refuted*float64(m.rtt.srtt)/1e9 <= 1
		if r.st == "search" {
			r.best = r.rate
			if r.doubled {
				r.best = r.below
			}
			if ok {
				if !r.doubled || r.succ >= int64(m.tun.MeasureSuccesses) {
					// Lowered by the measure only where the refuted step drew a whole one: over
					// earlier steps it averages their slower paces into a rate the server never
					// refused (three processes sharing a burst of one: the estimate a third of the
					// pace held).
					r.best = min(r.best, meas)
				}
				if r.doubled && !cheap && meas > r.below {
					// No bisection follows: the pace the search held (outlasting the credit,
					// searchStep) shows the rate above half of it, the one refuted shows it
					// below that, and the probes would climb the rest one quiet span each (a
					// burst of 2 at 50/s behind 20 ms held 32/s: 1.58x). The rate the server
					// admitted at the refuted pace, within the bracket, is the estimate; one
					// the credit left raised above the rate (at most the refuted pace, four
					// times the rate) the cuts and the long-run bound bring down.
					r.best = min(meas, refuted)
				}
			}
		}
		// A test that began from nothing and is refuted sooner than any rate at or above the
		// lower end allows refutes the lower end too: a pace p over a rate e >= best overdraws
		// an empty bucket by 1-e/p a success, so it draws at least p/(p-best)-1 successes
		// before its first throttle. Then there is no bracket: the recover below cuts to Backoff
		// times the lower end and ramps back to it, and a throttle on the way bounds the
		// estimate by the pace it refuted. Not against a server that admitted one request
		// before its first throttle (a burst of one: nginx's limit_req without burst,
		// x/time/rate with a burst of 1): its bucket holds no credit beyond the request that
		// takes it, so any pace over its rate is refused by the first or second send, however
		// close to the rate; so refuted, a test of 11.3/s against 10/s left 8/s cruising
		// (1.35x).
		lowRefuted := r.st == "bisect" && r.fresh && r.burst > 1 && refuted > r.best &&
			float64(r.succ) < math.Floor(refuted/(refuted-r.best))-1
		if r.doubled && refuted > r.best && !lowRefuted && cheap && m.tun.ProbeGain > 0 {
			r.best = r.clamp(r.best)
			// The rate lies in [best, refuted): a doubling leaves a bracket of two, and cruising
			// at its lower end would leave up to half the server's rate unused until the probes
			// climb it, one quiet span each. Test the bracket's geometric middle instead, at
			// once: the throttle emptied the server's credit, so the test starts from nothing
			// and is refuted within p/(p-rate) sends if too fast.
			r.hi = refuted
			if !r.narrow(m) {
				prev := r.st
				r.st, r.fresh = "bisect", true
				r.rate = r.clamp(math.Sqrt(r.best * r.hi))
				r.cutAt, r.cutSuccesses, r.succ = t, m.successes, 0
				return fmt.Sprintf("%s: throttled at %.3g/s -> bisect: test %.3g/s (held %.3g/s)", prev, refuted, r.rate, r.best)
			}
		}
	case r.st == "probe":
		// The probe found the limit: the estimate stands, and the next probe starts small.
		r.gain = m.tun.ProbeGain
	case m.successes == r.cutSuccesses:
		// A wall: nothing admitted since the last cut (r.succ counts from the last change of
		// state, which a held test or probe also is: a throttle right after one is no wall).
		// The estimate stands (a window's quota is gone, not its rate), and the pace halves, so
		// that the wall draws a number of throttles logarithmic in its length, not linear.
		r.rate = r.clamp(r.rate / 2)
		r.cutAt, r.cutSuccesses = t, m.successes
		r.wallRate = r.rate
		// The long-run measure starts again after the wall: the silence is a window's (or a
		// burst's debt), not what the server sustains at a steady pace.
		r.ncut = 0
		return fmt.Sprintf("wall (throttled with nothing admitted since the cut): pace halves to %.3g/s", r.rate)
	case r.st == "recover":
		// Throttled while coming back from a cut, at a pace under the estimate. A refilling
		// server never throttles a pace under its rate, however empty its bucket: the estimate
		// was too high (a search that outran the burst measures the burst), and the pace the
		// throttle refuted bounds it. (A window's quota can run out under its average rate too;
		// the bound costs it at most the step back up that a probe takes.)
		r.best = min(r.best, r.rate)
	default:
		// Throttled just under the estimate: it was too high. The rate measured over the last
		// successes overstates what the server sustains (a bucket that refilled while the pace
		// was below it spends its burst into the measure), so the estimate also steps down by
		// the probe's gain, the step a probe would have taken it up.
		r.best = min(r.best, r.rate)
		if ok {
			r.best = min(r.best, meas)
		}
		r.best *= 1 - m.tun.ProbeGain
	}
	// The rate admitted over the last epochs bounds an estimate that the server's credit may
	// have inflated (a search or a measure spent a burst into it). Not a probe's: the estimate
	// it probed from held a whole quiet cruise, and the long run averages the dips after the
	// cuts into it (against nginx's limit_req at 200/s a refuted probe took an estimate of 203
	// held down to 169, and the pace sawed between 140 and 200).
	if lr, ok := r.longRun(t, m); ok && prev != "probe" {
		r.best = min(r.best, lr)
	}
	r.best = r.clamp(r.best)
	r.rate = r.clamp(m.tun.Backoff * min(r.rate, r.best))
	r.rCut, r.cutAt, r.cutSuccesses, r.succ, r.st = r.rate, t, m.successes, 0, "recover"
	r.wallRate = 0
	// The quiet span makes the throttles of an epoch a ThrottleBudget share of the successes: at
	// least the one that cut and the requests in flight with it, and at least what the last
	// epoch cost.
	r.quiet = r.quietSpan(m)
	r.cuts[r.ncut%longRunCuts] = struct{ at, successes int64 }{t, m.successes}
	r.ncut++
	return fmt.Sprintf("%s: throttled -> recover at %.3g/s (estimate %.3g/s, quiet for %d successes)", prev, r.rate, r.best, r.quiet)
}

// longRunCuts is how many epochs the long-run admitted rate spans: over four sawtooth cycles a
// bucket's burst, spent once into the measure, weighs a quarter of what it weighs over one.
const longRunCuts = 4

// longRun is the rate the server admitted, in requests per second, from the oldest remembered cut
// until t: over several epochs of pacing at and around the limit, what it sustains, with a burst
// spent once spread thin.
func (r *rateStrategy) longRun(t int64, m *model) (float64, bool) {
	if r.ncut < 2 {
		return 0, false
	}
	old := r.cuts[(r.ncut-min(r.ncut, longRunCuts))%longRunCuts]
	n := m.successes - old.successes
	if n < int64(m.tun.MeasureSuccesses) || t <= old.at {
		return 0, false
	}
	return float64(n) / float64(t-old.at) * 1e9, true
}

// intervalOf converts a rate in requests per second into nanoseconds per request (0: unpaced).
func intervalOf(perSec float64) int64 {
	if !(perSec > 0) || math.IsInf(perSec, 0) {
		return 0
	}
	return int64(math.Min(math.Round(1e9/perSec), math.MaxInt64/4))
}
