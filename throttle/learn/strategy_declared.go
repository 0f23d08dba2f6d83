package learn

import (
	"fmt"
	"math"
	"time"

	"github.com/steadyhttp/steady/dialects"
)

// declaredStrategy drives while the server's headers are believed. It spends what the server
// says remains at once (less the requests it has not seen yet), paces at the declared rate when
// that is spent, and, once the evidence shows the quota comes back whole, holds until the reset
// instead. States:
//
//	spending  the last answer left credit: requests go at once
//	pacing    credit spent, quota refilling or kind unknown: the declared pace (against an
//	          unknown kind, the first request at the pace is the experiment that tells it)
//	holding   credit spent, quota comes back whole: nothing until the reset
type declaredStrategy struct {
	credit int64 // what the newest answer left, less the sends counted since (at sendsAt)
	// upper is credit without the jitter margin: the most the server can have had left. The
	// credit is spent (it must not overdraw); the upper bound judges the kind experiment (a
	// request admitted with no quota left for it by any count).
	upper   int64
	sendsAt int64 // m.sends.n when credit was set
	// own is how many of this client's own sends the credit was lowered by when it was set (those
	// the answer had not seen): claims of this client on the remaining count, which plan weighs
	// against its share (see ownClaims).
	own        int64
	creditTime int64 // answer time of the response that set it
	newestSent int64 // send time of the request whose answer set it
	hasCredit  bool
	holdUntil  int64
	windowSeen int64 // the window read from the resets, for a limit declared without a window
	windowRead int64 // the longest reset seen less its grain, rounded up to a second: windowSeen before the gaps (see observe)
	// capacitySeen is the largest capacity the answers of a continuous quota imply (Remaining
	// plus what refills until the reset): see capacity.
	capacitySeen int64
	mostLeft     int64 // the largest Remaining the quota's answers said (see capacity, cushionless)
	leftSaid     bool  // an answer of the quota said its Remaining
	// regrow is how much the share climbs per admitted answer of a quota that cannot show spare
	// (spareUnseen) after a halving: a DeclaredBudget share of the halved share.
	regrow float64
	// saidLimit per saidWindow is the quota as the server said it (its window inferred where it
	// said none), before a capacity its resets show narrows it: the window of sends is kept to it.
	saidLimit, saidWindow int64
	lastReset             int64 // the reset the newest answer said, and its grain
	lastGrain             int64
	resetAt               int64 // the latest the reset can be, in the answers' time (see narrowReset); 0: none said
	// resetInstant is the instant (Signal.ResetAt) the answer that set resetAt named (0: none).
	// Where resetAt is a projection of the one before by whole windows (narrowReset),
	// projectedFrom is that one's instant, projectedOver the instant the projection replaced and
	// projectedWindows how many windows it added (projectedFrom 0: no projection): see
	// projectionRefuted.
	resetInstant                 int64
	projectedFrom, projectedOver int64
	projectedWindows             int64
	leastLeft                    int64 // the least remaining any answer since that reset began said; -1: none yet
	shareCutAt                   int64 // when the share was last halved: throttles sent before it are of that epoch
	// othersSeen is set once another client on the key shows itself: a refusal that says the
	// quota is spent while this client's count left room beyond all its requests in flight
	// (halveShare), or a count fallen by more than this client's own requests can explain.
	othersSeen bool
	// baseLeft is the lowest count an answer said (see observe), baseSends the sends recorded
	// when it came, baseInFlight the requests in flight then (the most of this client's own the
	// count had yet to see) and baseAnswered its answer time: the baseline against which a later
	// count shows another client's spending. baseSet once there is one.
	baseLeft, baseSends, baseInFlight, baseAnswered int64
	baseInstant                                     int64 // the instant the baseline's window named (0: none)
	baseSet                                         bool
	// lastInstant is the instant the newest answer named as its reset, where the server writes
	// one (Signal.ResetAt; 0: none): see notBackAtWindowEnd.
	lastInstant int64
	bareAt      int64 // when a bare 429 last counted against the headers: those sent before it do not
	// resetLate is how much later than its answers say the reset comes (0 until seen): a server
	// that writes its reset in whole seconds truncated (ulule's expiration.Unix()) says a second
	// that begins up to a second before the instant it means. Learned from a refusal of the first
	// request sent at the reset that names the reset awaited (see lateReset).
	resetLate int64
	// measureFrom is when the first answer of a bucket whose rate is assumed came (0: none): the
	// probes that measure its leak are timed from it (see probeInterval).
	measureFrom int64
	level       int64 // the remaining places the newest answer of such a bucket said
	// admitted holds the latest admissions of a quota whose window is read from its resets, and
	// windowAdmitted the shorter window they show (0: none): see admittedLog.
	admitted       admittedLog
	windowAdmitted int64
	admittedAt     int64 // when windowAdmitted was last set (an answer's time)
	// deepest is the most the quota was ever seen to hold (the largest Remaining said, plus the
	// request answered) since its limit was said: the burst the hold of admittedLog allows for.
	// Unlike mostLeft it outlives a window the admissions shortened.
	deepest      int64
	resetFloor   int64 // the longest reset less its grain: the least the window can be
	longestReset int64 // the longest reset said: the most a window's can be (see projectionRefuted)
	// oneProbe tests shorter windows for a quota of one whose resets say no more than their
	// grain (see quotaOfOneProbe).
	oneProbe quotaOfOneProbe
	// windowFirst is the answer time of the first answer that named the reset awaited (set where
	// narrowReset starts a new one); startsAtFirst is set once a short window's resets were seen
	// to come later than said, and the end is taken as a window after windowFirst: where windows
	// begin at the first request after the last ended, that request's answer came a one-way trip
	// after its window began (see endsAfterFirst).
	windowFirst   int64
	startsAtFirst bool
	// refuted counts the windows the admissions showed that a refusal at their pace gave up:
	// each one makes the next wait for twice as many admissions (see admittedBeyond).
	refuted int64
}

func (d *declaredStrategy) name() string { return "declared" }

func (d *declaredStrategy) state() string {
	switch {
	case d.current(nil) > 0:
		return "spending"
	case d.holdUntil > 0:
		return "holding"
	default:
		return "pacing"
	}
}

// current is the credit left now: what the newest answer said, less what was sent since.
func (d *declaredStrategy) current(m *model) int64 {
	if !d.hasCredit {
		return 0
	}
	if m == nil {
		return d.credit
	}
	return d.credit - (m.sends.n - d.sendsAt)
}

// ownClaims is how many of this client's sends the credit left now is lowered by: those the
// answer that set it had not seen, and those sent since.
func (d *declaredStrategy) ownClaims(m *model) int64 {
	if !d.hasCredit {
		return 0
	}
	return d.own + (m.sends.n - d.sendsAt)
}

// currentUpper is the upper bound on the credit left now (see upper).
func (d *declaredStrategy) currentUpper(m *model) int64 {
	if !d.hasCredit {
		return 0
	}
	return d.upper - (m.sends.n - d.sendsAt)
}

// capacity is the quota's capacity that the answers of a continuous quota declared as s.Limit per
// w imply (0: none said, or not continuous): a quota that refills at Limit per w and is whole again
// Reset after an answer that left Remaining holds Remaining + Reset·Limit/w. The largest seen
// stands: it is the capacity of a bucket exactly, and bounds that of a quota enforced in shorter
// windows than the one it is stated in (OpenAI documents 60,000 a minute enforced as 1,000 a
// second; the resets of such a server say a second, and taken at its word, the minute's quota is
// spent at once into a wall). A capacity within a request of the limit is the limit.
func (d *declaredStrategy) capacity(s *Signal, w int64) int64 {
	if !s.Continuous || !s.HasRemaining || !s.HasReset || w <= 0 || s.Limit <= 0 {
		return 0
	}
	c := s.Remaining + int64(math.Ceil(float64(s.Reset)*float64(s.Limit)/float64(w)))
	d.capacitySeen = max(d.capacitySeen, c)
	// A quota that comes back whole at a reset (a fixed window, a sliding log) is whole well
	// before the rate refills it, and the formula reads up to twice its size there (99 of a fixed
	// window of 50); the most it was ever seen to hold bounds it (the request answered took one).
	capacity := min(d.capacitySeen, max(d.mostLeft, s.Remaining)+1)
	if capacity+1 >= s.Limit {
		return s.Limit
	}
	return capacity
}

// grainOf is the grain of a reset judged against the window: the dialect's, and, where the window
// is a capacity the resets showed (narrower than the one said), up to two seconds for a reset that
// is a whole number of seconds (an instant in whole seconds against a Date header, as Anthropic
// writes them): such a reset cannot tell a window of a second from one of three, and read as
// beyond it, a bucket was taken for a counter and paced at L-1 per W (1.27x).
func (d *declaredStrategy) grainOf(reset, grain int64, m *model) int64 {
	if m.window < d.saidWindow && reset%int64(time.Second) == 0 {
		return max(grain, 2*int64(time.Second))
	}
	return grain
}

// creditAtSend is the credit the request sent at sent had when it left, and its upper bound
// (recorded with the send): positive when the headers said there was quota for it.
func (d *declaredStrategy) creditAtSend(sent int64, m *model) (credit, upper int64, ok bool) {
	if !d.hasCredit {
		return 0, 0, false
	}
	return m.sends.creditOf(sent)
}

func (d *declaredStrategy) observe(t int64, s *Signal, m *model) string {
	if s.Failed {
		return ""
	}
	if !s.headers() {
		if s.Bare && m.trust == trustBelieved && s.Sent > d.bareAt {
			// A 429 that says nothing of any quota, for a request the headers had left room
			// for beyond all those in flight: whatever refused it keeps a limit the headers do
			// not describe (a proxy's in front of an API that writes its own: HAProxy refusing at
			// 100/s with a bare 429 before a backend that declared 100,000,000 per second,
			// believed through 320 throttles in 3,000 requests). It counts against them as one
			// that says quota remains, once for the requests already on their way when it was
			// answered (one collision refuses them all). A 503, a units quota's refusal
			// (GitHub's GraphQL points) or a global limit's (Discord's) is not bare. An API
			// whose own refusals carry no count and whose quota another client spent looks the
			// same; its headers are distrusted after as many, for the learner's life, and the
			// headerless law learns the rate they no longer tell.
			if c, _, known := d.creditAtSend(s.Sent, m); known && c > 1+int64(m.inFlight) {
				d.bareAt = s.Answered
				return d.contradicted(m, "refused by a bare 429 while quota was said to remain")
			}
		}
		return ""
	}
	var ev string
	if m.trust == trustNone {
		m.trust = trustBelieved
		ev = "headers seen: believed"
	}
	if s.Limit > 0 {
		w := s.Window
		// A reset at the parsers' bound (dialects.MaxDelay) is one no parser could represent,
		// clamped ("999999999999999999999"): it says nothing of a window.
		if (w <= 0 || s.WindowAssumed) && s.HasReset && s.Reset < int64(dialects.MaxDelay) {
			// A limit without a window (X-RateLimit-Limit alone, as GitHub sends it) is per the
			// longest reset seen, rounded up to whole seconds, the unit such resets come in.
			// A reset written in whole seconds lies up to its grain late (the server rounds the
			// instant up, and a Date header truncates the other end): a bucket of one second says
			// resets of two. The true reset is in (Reset-grain, Reset]; the window is the whole
			// second at or above its lower end (a delta of exactly 3600 stays an hour). A reset
			// without a grain is exact (Discord's Reset-After): a sliding log answering the
			// request that filled it says exactly its window, which is the window, not the next
			// second up (read as one, a 50/1s log was paced and held as 50/2s: 1.9x).
			lower := s.Reset - s.ResetGrain
			if s.ResetGrain > 0 {
				lower++ // the interval is open below
			}
			d.resetFloor = max(d.resetFloor, lower)
			d.longestReset = max(d.longestReset, s.Reset)
			d.windowRead = max(d.windowRead, ceilSecond(max(lower, 1)))
			d.windowSeen = max(d.windowSeen, d.windowRead)
			if gap := s.ResetAt - d.lastInstant; d.lastInstant != 0 && s.ResetAt != 0 &&
				(m.kind == KindWhole || m.kind == KindCounter) && d.windowRead >= lateSpan*int64(time.Second) &&
				gap > d.windowSeen && gap <= d.windowRead+s.ResetGrain {
				// A quota that comes back at its window's end, whose resets are instants, two in
				// a row up to the grain more than the window read apart: the ends of two windows,
				// a window apart. The longest reset less its grain reads a minute's window as 58
				// or 59 s where the server's instants are exact or truncated (go-chi/httprate's
				// windows, a Unix time against a Date header truncated to the second), and a send
				// a second early was refused and told to wait a whole window (httprate's
				// Retry-After). Only where the window is lateSpan seconds or more, as for
				// lateness: a second is then at most a tenth of it, and no bucket's or a shorter
				// window's instants, a second or two apart, pass for it. Never more than the
				// grain above the reading: a window that begins at the first request after the
				// last one ended (GitHub's) names ends a window and an idle spell apart.
				d.windowSeen = gap
			}
			if w <= 0 || d.windowSeen < w {
				// No window said, or one the dialect assumed from the vendor's documentation
				// (GitHub's hour) that the server's own resets show to be shorter: a fixed
				// window's reset never lies beyond its window, so the longest seen bounds it.
				w = d.windowSeen
			}
			if s.Limit != d.saidLimit {
				d.admitted.reset()
				d.windowAdmitted, d.deepest = 0, 0
			}
			if note := d.admittedBeyond(s, m, w); note != "" {
				ev = join(ev, note)
			}
			if d.windowAdmitted > 0 {
				// A longer reset said since is the least the window can be (a server whose rate
				// fell): the admissions' window never undercuts the resets.
				d.windowAdmitted = max(d.windowAdmitted, d.resetFloor)
				w = min(w, d.windowAdmitted)
			}
			if note := d.oneProbe.admitted(s, m, w, d.othersSeen); note != "" {
				ev = join(ev, note)
			}
			if pw := d.oneProbe.window(); pw > 0 {
				w = min(w, pw)
			}
		}
		if w > 0 && (s.Limit != d.saidLimit || w != d.saidWindow) {
			// A new quota said: the capacity its resets show is measured afresh (3,000 a minute
			// with a capacity of 50, then 300 a minute, is not 50 per 10 s).
			d.saidLimit, d.saidWindow, d.capacitySeen, d.mostLeft, d.leftSaid = s.Limit, w, 0, 0, false
		}
		limit, note := s.Limit, ""
		if c := d.capacity(s, w); c > 0 && c < limit {
			// The same rate, a smaller quota: c per the time the rate refills c in.
			w = max(int64(math.Ceil(float64(w)*float64(c)/float64(limit))), 1)
			limit, note = c, fmt.Sprintf(" (%d/%v said; its resets show a capacity of %d)", s.Limit, durationOf(s.Window), c)
		}
		if w > 0 && (limit != m.limit || w != m.window) {
			m.limit, m.window = limit, w
			ev = join(ev, fmt.Sprintf("declared %d/%v%s", limit, durationOf(w), note))
		}
	}
	if s.Limit > 0 {
		m.rateAssumed = s.RateAssumed
	}
	if s.HasRemaining {
		d.mostLeft, d.leftSaid = max(d.mostLeft, s.Remaining), true
	}
	if m.rateAssumed && s.HasRemaining && s.Limit > 0 {
		if d.measureFrom == 0 {
			d.measureFrom = max(s.Answered, 1)
		}
		d.level = s.Remaining
		if m.kind == KindUnknown {
			// The vendor documents a leaky bucket, and its reset is the time the level takes to
			// drain at the assumed rate, no window's end: no experiment tells another kind.
			m.kind = KindRefilling
			ev = join(ev, "kind -> refilling (a bucket, as the dialect documents)")
		}
		before := m.leak.rate
		if m.leak.observe(s.Sent, s.Answered, max(s.Limit-s.Remaining, 0), s.Throttled, &m.sends, reorderMargin(m)) &&
			m.leak.rate > 2*before {
			// Announced when it doubles, not on every rise: a measure that creeps up by a unit's
			// worth is not news.
			ev = join(ev, fmt.Sprintf("leak measured: %.4g/s (the level's fall between answers)", m.leak.rate*1e9))
		}
	}
	if m.trust == trustDistrusted {
		return ev
	}

	// Evidence against the headers: a throttle for a request the headers had quota for, or a
	// throttle that itself says quota remains.
	c, up, known := d.creditAtSend(s.Sent, m)
	if debugDeclared != nil {
		debugDeclared(fmt.Sprintf("answer sent=%v at=%v thr=%v R=%d c@send=%d known=%v credit=%d unseen=%d inflight=%d",
			durationOf(s.Sent), durationOf(s.Answered), s.Throttled, s.Remaining, c, known, d.current(m), m.sends.unseen(s.Sent), m.inFlight))
	}
	if s.Throttled {
		// A credit of one is a race lost to the jitter or to another client as often as a lie,
		// and so is a credit the requests in flight could have taken: any of them may have
		// overtaken this one on the way (their order at the server is not their order here).
		// Only a request the headers left room for beyond all of them counts against them.
		saysSpent := s.HasRemaining && s.Remaining == 0
		probeNote, probe := d.oneProbe.refused(s, m)
		ev = join(ev, probeNote)
		if probe == probeFoundRefused && d.windowAdmitted > 0 {
			// The admissions at the pace the probe found showed its window too: given up with
			// it (as a refusal at the admissions' own pace gives theirs up, below).
			d.windowAdmitted = 0
			d.admitted.reset()
			d.refuted++
		}
		if probe != probeNotOwn {
			// The probe's pace refused, not the server's word: no kind, share or other evidence.
		} else if note := d.projectionRefuted(s, m, saysSpent); note != "" {
			ev = join(ev, note) // the window was read too short: no client or kind needs to be assumed
		} else if note := d.notBackAtWindowEnd(s, m, up, known); note != "" {
			ev = join(ev, note) // explained by the kind: no other client needs to be assumed
		} else if note := d.endsAfterFirst(s, m, saysSpent); note != "" {
			ev = join(ev, note)
		} else if late := d.lateReset(s, m, saysSpent); late > 0 {
			// The reset awaited had not come when the request sent for it arrived: it comes a
			// grain later than the answers say, from now on. A second late in every window of a
			// fixed window drew a throttle at every other reset (GitHub-style 100/min: 0.5 %).
			d.resetLate, d.resetAt = late, d.resetAt+late
			ev = join(ev, fmt.Sprintf("resets come %v later than said (throttled at the reset, which it names)", durationOf(late)))
		} else if known && c > 1+int64(m.inFlight) && saysSpent && s.Sent > d.shareCutAt {
			// The headers left room for it, and the throttle itself says the quota is spent:
			// consistent headers, a quota spent by someone else. Another client on the key took
			// the credit this one was counting on: the share halves (see below).
			d.halveShare(s, m)
			d.othersSeen = true
			ev = join(ev, fmt.Sprintf("share -> %.3g of the quota (throttled with credit left, the quota said spent: another client spends it)", m.share))
		} else if (known && c > 1+int64(m.inFlight) && !saysSpent) || (s.HasRemaining && s.Remaining > 0) {
			if note := d.contradicted(m, "with quota said to remain"); note != "" {
				return join(ev, note)
			}
		} else if known && up <= 0 && d.windowAdmitted > 0 && s.Sent > d.admittedAt {
			// Refused at the pace the admissions showed, with nothing left: the rate they showed
			// is not there now (the server's fell while its limit stayed, or another client on
			// the key takes part of it). The window read from the resets returns, with its lane,
			// and the admissions are counted afresh: alone on a server whose rate did not fall,
			// they show it again. The share stands: this pace was the learner's, not the
			// server's word.
			d.windowAdmitted = 0
			d.admitted.reset()
			d.refuted++
			ev = join(ev, "window -> as the resets read it (refused at the pace the admissions showed)")
		} else if known && up <= 0 && m.kind != KindUnknown && m.kind != KindWhole && s.Sent > d.shareCutAt {
			// Throttled at the declared pace (no credit was spent on it) once the kind is known:
			// alone on the key, the pace keeps within the quota, so another client spends it too.
			// The share halves (as TCP's window on a loss: n clients that collide halve their
			// sum, and meet their quota in log2(n) epochs); spare quota brings it back, or, where
			// no answer can show spare, a climb over 1/DeclaredBudget answers (spareUnseen).
			d.halveShare(s, m)
			ev = join(ev, fmt.Sprintf("share -> %.3g of the declared rate (throttled at its pace with nothing left: another client spends the quota)", m.share))
		} else if known && up <= 0 {
			// The experiment on an exhausted quota: a throttle says it comes back whole, or, for
			// a refilling one paced at the declared rate, that it sustains only limit-1 per window.
			switch {
			case m.kind == KindUnknown && !resetBeyond(d.lastReset, d.grainOf(d.lastReset, d.lastGrain, m), m.window):
				m.kind = KindWhole
				ev = join(ev, "kind -> whole (throttled at the declared pace after the quota ran out)")
			case m.kind == KindUnknown:
				// A quota that comes back whole does so within its window; one whose reset lies
				// beyond it weighs a past window (a sliding window counter).
				m.kind = KindCounter
				ev = join(ev, fmt.Sprintf("kind -> counter (throttled at the declared pace, the reset %v beyond the window)", durationOf(d.lastReset)))
			case m.kind == KindRefilling && !m.rateAssumed:
				m.kind = KindCounter
				ev = join(ev, "kind -> counter (throttled at the declared pace while refilling)")
			}
		}
	} else if known && up <= 0 {
		switch {
		case m.kind == KindUnknown:
			m.kind = KindRefilling
			ev = join(ev, "kind -> refilling (admitted at the declared pace after the quota ran out)")
		case m.kind == KindWhole && s.HasRemaining && s.Remaining < m.limit/2 &&
			d.resetAt > 0 && s.Sent+2*m.rtt.oneWay() >= d.resetAt:
			// Admitted after the hold, but little came back: the quota returns a little at a
			// time (a sliding log spent unevenly, a sliding window counter). Only a request
			// that reached the server after the latest the reset could be tells: one that took
			// the last of the old window (the credit counts on the safe side) says nothing.
			m.kind = KindRefilling
			ev = join(ev, fmt.Sprintf("kind -> refilling (%d of %d back after the reset)", s.Remaining+1, m.limit))
		}
	}

	if !s.Throttled && m.share < 1 && m.limit > 0 && s.HasRemaining && s.Remaining > 1+d.reserve(m) {
		// Spare quota: more is left than this client keeps back, so the others spend less than
		// it left them. The share grows additively (TCP's additive increase, per round of own
		// answers: share×limit of them come back in a window), so that clients that halve on a
		// collision and grow alike converge to equal shares (AIMD's fairness), by the probe's
		// gain of the declared rate per window times the part of the quota the count says is
		// left: the cushion the key's clients leave it, of the most any answer said (a bucket
		// smaller than its declared limit is full at its own size, not at the quota's edge).
		// Far below the edge that is the whole gain; near it, a fraction, so that clients there
		// outgrow it seldom (each growing by the whole gain, ten clients at the edge outgrew the
		// quota by half of it per window together, and collided in each window).
		left := min(float64(s.Remaining)/float64(max(min(d.mostLeft+1, m.limit), 1)), 1)
		m.share = min(m.share+m.tun.ProbeGain*left/(m.share*float64(m.limit)), 1)
	} else if !s.Throttled && m.share < 1 && d.spareUnseen(m) {
		// No answer of a bucket that holds no more than the reserve can show spare: the others'
		// collisions and the client's own look alike. The share climbs back to where it was
		// over 1/DeclaredBudget admitted answers (AIMD's additive increase, slow enough that a
		// climb that meets another client again costs one attempt in 1/DeclaredBudget).
		m.share = min(m.share+d.regrow, 1)
	}
	if s.HasReset && s.Sent >= d.newestSent {
		d.lastReset, d.lastGrain, d.lastInstant = s.Reset, s.ResetGrain, s.ResetAt
	}
	if s.HasReset {
		d.narrowReset(s, m)
		if d.startsAtFirst && d.windowFirst > 0 {
			// Narrowed by the instants it names, a window that begins at the first request still
			// ends no sooner than a window after that request's answer (see endsAfterFirst).
			d.resetAt = max(d.resetAt, d.windowFirst+m.window)
		}
	}
	if s.HasRemaining && (d.leastLeft < 0 || s.Remaining < d.leastLeft) {
		d.leastLeft = s.Remaining
	}
	// A reset beyond the window, by more than its unit's rounding.
	if s.HasReset && m.window > 0 && resetBeyond(s.Reset, d.grainOf(s.Reset, s.ResetGrain, m), m.window) && (m.kind == KindUnknown || m.kind == KindRefilling) {
		// A quota restored only after more than its window weighs a past window on the present
		// one: a sliding window counter, whatever it has admitted so far.
		m.kind = KindCounter
		ev = join(ev, fmt.Sprintf("kind -> counter (reset %v beyond the %v window)", durationOf(s.Reset), durationOf(m.window)))
	}
	if s.HasRemaining {
		// The answer to the newest request sets the credit; an answer to an older one, or to
		// one that left in the same instant (overtaken on the way), can only lower it.
		// Requests that left up to a jitter margin before this one may have arrived after it,
		// unseen too: counting them keeps a reordering on the way from drawing a throttle.
		own := m.sends.unseenBy(s.Sent, m.rtt.margin(m.tun.JitterMargin))
		c := s.Remaining - own
		up := s.Remaining - m.sends.after(s.Sent) // those in the same instant may have been seen
		if !s.Throttled && !d.othersSeen && d.baseSet && !m.rateAssumed && s.Sent >= d.baseAnswered &&
			m.sends.units == m.sends.n {
			// A request sent after the baseline's answer came back was counted after it: between
			// the two, alone on the key, only this client's own requests can have lowered the
			// count (a reset or a refill raises it), at most those in flight then and every one
			// sent since (one sent after this one may have overtaken it on the way). A count that
			// fell by more was spent by another client. One request's slack, as a refusal's (see
			// below). Where requests cost more than one unit the count of requests bounds
			// nothing, and the detector stays off.
			ownSince := d.baseInFlight + m.sends.n - d.baseSends
			if fall := d.baseLeft - s.Remaining; fall > ownSince+1 {
				d.othersSeen = true
				ev = join(ev, fmt.Sprintf("another client seen: the count fell by %d, this client sent at most %d", fall, ownSince))
			}
		}
		if !d.baseSet || s.Remaining <= d.baseLeft || (s.ResetAt != 0 && s.ResetAt > d.baseInstant) {
			// The baseline of the detector above: the lowest count said (of the window named
			// last, where the resets are instants). Alone on the key the count falls only by
			// this client's requests, so every request counted after the lowest one answered so
			// far was unanswered when it came back: in flight then, or sent since. A higher count
			// is one counted earlier (a slow answer, a burst's answers out of order), or of a
			// bucket refilled since, against which a fall shows less.
			d.baseLeft, d.baseSends, d.baseInFlight, d.baseAnswered, d.baseSet = s.Remaining, m.sends.n, int64(m.inFlight), s.Answered, true
			d.baseInstant = max(d.baseInstant, s.ResetAt)
		}
		if s.Sent <= d.newestSent && d.hasCredit {
			if cur := d.current(m); cur < c {
				c, own = cur, d.ownClaims(m)
			}
			up = min(up, d.currentUpper(m))
		}
		if m.kind == KindWhole && d.leastLeft >= 0 {
			// A whole quota only falls until its reset: the least any answer since the reset
			// said is what was left after the last request the server answered, and only the
			// requests still unanswered can have come after it. A bound that holds however wide
			// the jitter margin grows (a loaded host's round trips), where the count of unseen
			// sends above treats every send within the margin as unanswered.
			if least := d.leastLeft - int64(m.inFlight); least > c {
				c, own = least, int64(m.inFlight)
			}
		}
		d.upper = up
		d.newestSent = max(d.newestSent, s.Sent)
		d.credit, d.own = c, own
		d.sendsAt, d.creditTime, d.hasCredit = m.sends.n, s.Answered, true
		d.holdUntil = 0
		if d.credit <= 0 && (m.kind == KindWhole || (m.kind != KindCounter && d.backBeforePace(s, m))) {
			d.holdUntil = d.wholeReturns(m)
		}
	}
	return ev
}

// admittedBeyond records an admission of a quota whose window is read from its resets (read, in
// force now) and returns the event when the admissions show a shorter window: more admitted in a
// span than a quota of s.Limit per read admits in it, of any kind (see admittedLog). The window
// becomes the one in which the server's least rate refills the limit, rounded up to a
// millisecond. It shortens while the admissions say so, for the quota's life (a new limit said
// starts afresh), lengthens only to a longer reset said since, and is given up when a request sent
// at its pace is refused (see observe: a server whose rate fell, or another client). It is never
// below the longest reset less its grain (resetFloor): a window is at least as long as any reset
// it says, so the headers, read to their resolution, stay the contract. The rule chooses only
// within what the resets leave open: a reset of "1" in whole seconds leaves (0, 1 s], one of "60"
// nothing under 59 s (a server that says 100 per minute and admits more is kept to 100 per
// minute, as the headers say).
func (d *declaredStrategy) admittedBeyond(s *Signal, m *model, read int64) string {
	if d.othersSeen && d.windowAdmitted > 0 {
		// Another client on the key: what this one was admitted is its share, and clients that
		// each learn the whole rate from it split the key by collisions, not evenly (two on
		// throttled's 20/s burst 5: the smaller one got 0.04 of its fair share). The window read
		// from the resets returns for good.
		d.windowAdmitted = 0
		return "window -> as the resets read it (another client on the key)"
	}
	if s.Throttled || read <= 0 || d.othersSeen {
		return ""
	}
	d.admitted.add(s.Sent)
	if s.HasRemaining {
		d.deepest = max(d.deepest, s.Remaining+1)
	}
	if d.refuted > 0 && d.admitted.n < admittedLogSize<<min(d.refuted-1, 20) {
		// A window the admissions showed was refused at its pace: the next is read only over
		// a whole log of admissions since, twice as many after each refusal, so that a rate
		// that comes and goes (another client on the key unseen, a server whose rate falls and
		// rises) costs at most a refusal per log, fewer and fewer.
		return ""
	}
	hold := 2 * max(s.Limit, d.deepest)
	rate, admitted, span := d.admitted.floorRate(hold, reorderMargin(m))
	if rate <= 0 {
		return ""
	}
	ms := int64(time.Millisecond)
	w := max((int64(math.Ceil(float64(s.Limit)/rate))+ms-1)/ms*ms, d.resetFloor)
	if d.windowAdmitted > 0 {
		read = d.windowAdmitted
	}
	if float64(w) > float64(read)*(1-m.tun.ProbeGain) {
		// A step under ProbeGain moves the pace by less than a probe of the headerless law
		// does; the credit the counts give spends what the bucket refills meanwhile.
		return ""
	}
	d.windowAdmitted, d.admittedAt = w, s.Answered
	return fmt.Sprintf("window -> %v (%d admitted in %v: more than %d per %v)", durationOf(w), admitted, durationOf(span), s.Limit, durationOf(read))
}

// contradicted counts one throttle that contradicts the believed headers (why says how) and
// returns the event when it makes them distrusted, for the learner's life (see observe). The count
// starts again once the server has admitted a whole declared quota since the first: races with
// other clients, one now and one a day later, are no server that over-claims, and a lying one
// never admits what it claims (counted by time, a lie answered with a Retry-After longer than the
// window was never distrusted).
func (d *declaredStrategy) contradicted(m *model, why string) string {
	if m.liveContradictions() == 0 {
		m.contradictions, m.contradictedAt = 0, m.successes
	}
	m.contradictions++
	if m.contradictions < m.tun.DistrustAfter {
		return ""
	}
	m.trust = trustDistrusted
	return fmt.Sprintf("declared %d/%v -> distrusted (%d throttles %s)", m.limit, durationOf(m.window), m.contradictions, why)
}

// narrowReset keeps the latest the reset can be, in the answers' time (an answer's time plus the
// Reset it said): the earliest of the answers that refer to the same reset. A reset written in
// whole seconds lies up to its grain late, by as much as the answer came before the next whole
// second; answers spread over the window late each by another amount, and the earliest bound
// is within the jitter of the true instant. Two answers refer to the same reset when it has not
// passed yet and they put it within the grain and the jitter margin of each other; otherwise the
// newer answer starts a new bound.
func (d *declaredStrategy) narrowReset(s *Signal, m *model) {
	at := s.Answered + s.Reset + d.resetLate
	near := s.ResetGrain + m.rtt.margin(m.tun.JitterMargin)
	switch {
	case d.resetAt == 0:
	case at < d.resetAt+near:
		if d.resetAt > s.Answered && at > d.resetAt-near {
			d.resetAt = min(d.resetAt, at) // the same reset, told more closely
		}
		// Otherwise the answer names an earlier reset than the one held: a request of the
		// last window answered after this one began. It tells nothing of the next.
		return
	case m.window > 0 && m.kind == KindWhole && m.limit <= maxWindowLimit && at-s.ResetGrain > d.resetAt:
		// A new reset: a fixed window's comes one window after the last (by whole windows
		// after an idle spell), at the latest the projection of the last bound, which keeps
		// what the answers of the last window narrowed when every answer of this one is late
		// (GitHub's reset against its Date header reads "1 s" all through the second). A
		// sliding log's next reset may lie later than the projection when its window was
		// spent late, but the window lane (plan) keeps every send one window after the one
		// whose place it takes, so a hold that ends early there costs nothing.
		w := m.window
		k := (at - s.ResetGrain - d.resetAt + w - 1) / w
		d.projectedFrom, d.projectedOver, d.projectedWindows = 0, 0, 0
		if d.resetAt+k*w < at && d.resetInstant != 0 && s.ResetAt != 0 {
			d.projectedFrom, d.projectedOver, d.projectedWindows = d.resetInstant, s.ResetAt, k
		}
		d.resetAt, d.leastLeft, d.resetInstant, d.windowFirst = min(at, d.resetAt+k*w), -1, s.ResetAt, s.Answered
		return
	}
	d.resetAt, d.leastLeft, d.resetInstant, d.windowFirst = at, -1, s.ResetAt, s.Answered
	d.projectedFrom, d.projectedOver, d.projectedWindows = 0, 0, 0
}

// projectionRefuted returns the event when s shows the window read too short, and lengthens it:
// a refusal, saying the quota is spent, of a request that reached the server after the reset
// narrowReset projected one window (or k) after the last, naming again the instant the
// projection replaced, which lies further from the last than the window read (k of them). A
// fixed window's next end is one window after the last; one still to come there is a window's
// end farther away, and the instants the server names bound how far: their gap, per window the
// projection counted. The window read from resets in whole seconds is the least it can be
// (Reset less a grain of up to two seconds against a Date header): a fixed window of 2 s whose
// resets said "2" was read as one, its reset projected a second after the last, and every window
// a request sent at that second was refused (16 % of attempts at 5 per 2 s; 2.6 % at 20 per
// 9 s). lateReset takes a reset a grain late on windows of lateSpan grains or more; this one a
// window too short, on the instants alone, at any length. A sliding window counter that names the
// end of its next window as its reset (the instant it is whole again) is read as a fixed window
// of that length: paced within what it sustains, if not at all it does.
func (d *declaredStrategy) projectionRefuted(s *Signal, m *model, saysSpent bool) string {
	if !saysSpent || d.projectedFrom == 0 || s.ResetAt == 0 || s.ResetAt != d.projectedOver ||
		d.windowAdmitted > 0 || s.Sent+2*m.rtt.oneWay() < d.resetAt {
		return ""
	}
	// Never longer than the longest reset said: a fixed window's reset never lies beyond its
	// window. One that begins at the first request after the last ended (GitHub's) names ends a
	// window and an idle spell apart, and its gaps alone read a minute as 1m5s.
	gap := (s.ResetAt - d.projectedFrom + d.projectedWindows - 1) / d.projectedWindows
	w := min(ceilSecond(gap), ceilSecond(d.longestReset))
	if gap <= m.window || w <= d.windowSeen {
		return ""
	}
	d.windowSeen, d.windowRead = w, max(d.windowRead, w)
	d.resetAt = s.Answered + s.Reset + d.resetLate
	d.resetInstant, d.projectedFrom, d.projectedOver, d.projectedWindows = s.ResetAt, 0, 0, 0
	from := m.window
	m.window = w
	d.saidWindow, d.capacitySeen, d.mostLeft, d.leftSaid = w, 0, 0, false
	return fmt.Sprintf("window %v -> %v (refused after the reset projected a window on, naming the instant it replaced)", durationOf(from), durationOf(w))
}

// endsAfterFirst returns the event when s shows that a short window's resets come later than
// said, and takes them from the window's first answer from then on (startsAtFirst): a refusal,
// saying the quota is spent, of a request that reached the server after the reset awaited, naming
// it again, where the window is shorter than lateSpan grains (lateReset's second a window would
// cost up to half of it). A window that begins at the first request after the last one ended
// (ulule/limiter's, Redis INCR and EXPIRE) and says its end truncated to the second (ulule's
// `expiration.Unix()`) ends up to a second after it says; waited out at what it said, every
// window's first request was refused (10 per 2 s, no Retry-After: 42 of 192 attempts). Its end is
// a window after its first request arrived, which is no later than that request's answer less a
// one-way trip: in the answers' time, a window after that answer, a bound that does not drift as
// the windows begin where the client's requests arrive. A window aligned to the clock that says
// its end truncated is held past its end by the first request's trip, no more.
func (d *declaredStrategy) endsAfterFirst(s *Signal, m *model, saysSpent bool) string {
	if d.startsAtFirst || d.windowFirst == 0 || m.window <= 0 || m.window >= lateSpan*int64(time.Second) ||
		!d.refusedAtAwaitedReset(s, m, saysSpent) {
		return ""
	}
	d.startsAtFirst = true
	d.resetAt = max(d.resetAt, d.windowFirst+m.window)
	return fmt.Sprintf("resets from the window's first answer (throttled at the reset, which it names: a %v window that begins at the first request)", durationOf(m.window))
}

// lateReset returns how much later the resets come than the answers say, when s shows it for the
// first time (0 otherwise): a refusal, saying the quota is spent, of a request sent at or after the
// hold of a quota that comes back whole, whose answer names the reset awaited rather than the next
// one. The reset was written in whole seconds (a grain): the instant meant lies up to a second
// after the one read, so the correction is that second. It is taken only where a window is at least
// lateSpan grains long, so that waiting a grain more each window costs at most a tenth of it (the
// 1.10x goal); a shorter window keeps its resets as said (the throttle's Retry-After covers one).
func (d *declaredStrategy) lateReset(s *Signal, m *model, saysSpent bool) int64 {
	unit := int64(time.Second) // the grain's unit: resets in whole seconds
	if d.resetLate > 0 || m.window < lateSpan*unit || !d.refusedAtAwaitedReset(s, m, saysSpent) {
		return 0
	}
	return unit
}

// refusedAtAwaitedReset reports whether s is a refusal, saying a quota that comes back whole is
// spent, of a request that reached the server after the reset awaited (resetAt, the latest it can
// be), whose answer names that reset again (within its grain and the jitter margin), not the next:
// the reset came later than the answers said.
func (d *declaredStrategy) refusedAtAwaitedReset(s *Signal, m *model, saysSpent bool) bool {
	if m.kind != KindWhole || !saysSpent || !s.HasReset || s.ResetGrain <= 0 || d.resetAt == 0 ||
		s.Sent+2*m.rtt.oneWay() < d.resetAt {
		return false
	}
	return s.Answered+s.Reset <= d.resetAt+s.ResetGrain+m.rtt.margin(m.tun.JitterMargin)
}

// notBackAtWindowEnd returns the event when s shows that the quota is not whole at the end of its
// window, and makes the kind a counter: a request sent with nothing left, reaching the server after
// the reset the answers before it named, refused with nothing left and naming the next reset. A
// fixed window is whole there; a sliding log's refusal names its oldest send's expiry, no later
// than the reset awaited; a reset that came late (lateReset) is the one awaited, named again. Only
// a quota that weighs the window past (a sliding window counter naming its current window's end,
// as go-chi/httprate writes it), or another client that spent the new window first, refuses there
// and names the next: the latter is excluded by the evidence of other clients (othersSeen), and
// where none was seen a counter's pace costs another client little (its refusals at the pace
// halve its share as before).
//
// Where the server names its resets as instants (an epoch, a date: Signal.ResetAt), the evidence
// is exact: the refusal names a later instant than the answers before it, and the server's own
// clock at the refusal (the instant less the time until it: its Date header, where it sent one)
// had reached the one they named. A bucket names when it is full again: full by the instant the
// answers before named, it refuses nothing once the server's clock has reached it. Said as a
// delay, a reset tells the next window's end from the awaited one come late only where the window
// is long against the grain (lateSpan grains, as lateReset): it lies at least half a window after
// the reset awaited; at a window of a second in whole seconds, never.
func (d *declaredStrategy) notBackAtWindowEnd(s *Signal, m *model, up int64, known bool) string {
	if !s.Throttled || !known || up > 0 || m.rateAssumed || d.othersSeen || !s.HasReset ||
		!s.HasRemaining || s.Remaining > 0 || m.kind == KindCounter {
		return ""
	}
	switch {
	case s.ResetAt != 0 && d.lastInstant != 0:
		if s.ResetAt <= d.lastInstant || s.ResetAt-s.Reset < d.lastInstant {
			return "" // the reset named before, or it had not come yet at the server
		}
	case m.window < lateSpan*max(s.ResetGrain, 1) || d.resetAt == 0:
		return ""
	case s.Sent+2*m.rtt.oneWay() < d.resetAt || s.Answered+s.Reset+d.resetLate <= d.resetAt+m.window/2:
		return "" // it may have reached the server before the reset, or it names the one awaited
	}
	from := m.kind
	m.kind = KindCounter
	return fmt.Sprintf("kind %v -> counter (refused with nothing back at its window's end, naming the next: the past window weighs)", from)
}

// lateSpan is the shortest window, in grains, for which resets are corrected for lateness
// (lateReset): a correction of a grain per window then costs at most a tenth of it.
const lateSpan = 10

// backBeforePace reports whether the spent quota s said is back at a reset sooner than one spacing
// of its declared rate: at least one request's worth is back then, whatever its kind (a window
// whole, a bucket its next unit), so the next request goes then, not a spacing after the last. A
// counter is paced at limit-1 per window instead (see plan).
func (d *declaredStrategy) backBeforePace(s *Signal, m *model) bool {
	iv := m.declaredInterval()
	return s.HasReset && iv > 0 && s.Reset < iv && d.resetAt > 0
}

// wholeReturns is when a request may leave to find a quota that comes back whole: the latest the
// reset can be (narrowReset, in the answers' time: the server's time one way before), less the
// one way the request takes to get there, late by the jitter margin so that it arrives after the
// reset despite the jitter of its trip. 0 when no reset was said.
func (d *declaredStrategy) wholeReturns(m *model) int64 {
	if d.resetAt == 0 {
		return 0
	}
	return d.resetAt - 2*m.rtt.oneWay() + m.rtt.margin(m.tun.JitterMargin)
}

func (d *declaredStrategy) drives(t int64, m *model) bool { return m.trust == trustBelieved }

func (d *declaredStrategy) plan(t int64, m *model) plan {
	p := plan{interval: m.declaredInterval(), setCredit: true}
	if m.kind != KindCounter && !m.rateAssumed && d.saidLimit > 0 && d.saidLimit <= maxWindowLimit && d.saidWindow > 0 &&
		(d.windowAdmitted == 0 || (m.kind != KindRefilling && m.kind != KindUnknown)) {
		// Any window of this client's paced sends stays within the declared limit: against a
		// sliding log spent unevenly, a place frees up exactly one window after the send it holds
		// (the slack covers the jitter of both trips); against a bucket the pace already keeps it.
		// A sliding window counter weighs the previous window's sends instead, and a request one
		// window after a burst is still refused there: its pace of limit-1 per window is what it
		// sustains. A rate the dialect assumed is no window the server keeps: the level it reports
		// is the bucket's, and the leak is measured (see leakMeter). The window is the one the
		// server said, not a smaller capacity its resets show (see capacity): held to 50 in any
		// second, a bucket of 50 whose rate doubled back to 50/s could not spend what it refilled
		// meanwhile (1.14x). Where the admissions showed the window read from the resets too long
		// (admittedBeyond) and the quota refills or has never run out, there is no lane: held at
		// the window read, the admissions could outgrow it only by the credit, and the window
		// they show stalled short of the server's (throttled's 50/s burst 16 on loopback: 16/s
		// to 19.6/s over 2,000 requests). A sliding log so paced unevenly refuses a request at the
		// pace, which gives that window up (see observe), and the lane returns with the window read.
		p.windowLimit, p.window, p.windowSlack = int(d.saidLimit), d.saidWindow, m.rtt.windowSlack(m.tun.JitterMargin, d.saidWindow)
	}
	c := d.current(m)
	if m.kind == KindCounter {
		// A counter's remaining count is what fits now; spent at once it crowds this window,
		// and the next one, weighed by it, refuses the pace for a while. An even pace of limit-1
		// per window fits every instant.
		c = 0
	}
	switch {
	case m.rateAssumed && m.leak.rate == 0 && m.limit > 0:
		// The rate is a guess and not measured yet: half the bucket is kept back as room for the
		// probes that measure it (see probeInterval).
		c -= max(m.limit/2, 1)
		p.interval = d.probeInterval(t, m)
	case m.kind == KindRefilling || m.kind == KindUnknown:
		c -= d.reserve(m)
		if m.kind == KindRefilling && d.levelsSaid(m) && d.mostLeft >= d.reserve(m)+2 {
			// One place more is kept back where the bucket has shown room for it: the place
			// another client on the key takes. A client that spends a refilling quota to its
			// last request at its rate leaves every other client's attempt an empty bucket; they
			// are refused and halve, while this one, refused nothing, never learns they are
			// there (two clients at 5/s: 0.01 of the fair share for one of them). Taken, the
			// place leaves the quota contested, and both clients see it. Alone, the place costs
			// one spacing once: the bucket refills behind the pace as before.
			c--
		}
		if d.cushionless(m) {
			// The bucket cannot keep the reserve back: each request must reach the server a
			// whole spacing after the one before it, so the spacing carries the jitter margin,
			// and a request that left late is followed a whole spacing after it, never closer.
			p.interval += m.rtt.margin(m.tun.JitterMargin)
			p.burst = 1
		}
	}
	// Of what remains, this client spends its share: the others on the key spend theirs. The
	// remaining count the share is taken of is the one the answer said: this client's own sends
	// since (or unseen by it) are its claims on it, already taken from its share, not a part of
	// the quota the others left. Taken of the count less them, each answer handed out the share
	// of what the others' unseen claims still held, again: ten clients spending a tenth of every
	// count they were told emptied each window within it and were refused at every reset (a
	// third of all attempts against a fixed window of 50/s behind 50 ms).
	if m.share < 1 {
		own := d.ownClaims(m)
		c = int64(float64(c+own)*m.share) - own
	}
	p.credit = max(c, 0)
	if c <= 0 && d.holdUntil > t {
		// At the reset the quota is back: one request goes then, from a credit of one, not a
		// spacing of the declared rate after the last send (a day's quota of 1,000 is a spacing
		// of 86 s, and a reset 3 s away was waited out for 86 s); its answer tells what came back.
		p.hold, p.credit = d.holdUntil, 1
	}
	return p
}

// probeInterval is the spacing of the probes that measure the leak of a bucket whose rate the
// dialect only assumed (model.rateAssumed, leakMeter), before the level has been seen to fall.
//
// The leak can be anything from the assumed rate (or slower) to one request per round trip (a
// faster one is not told apart from an empty bucket at the client's pace). The probes go on the
// half of the bucket kept back, each admitted whatever the rate, and each answer shows the level.
// They divide that range into equal ratios, one per place kept: each leaves g times as long after
// the measure began as the one before it, from a round trip after it up to the assumed spacing,
// where g = (assumed/round trip)^(1/places). A leak within a factor g of the truth is seen about
// one probe after it. With one place left (or none to spend: a bucket of one or two), the spacing
// is the assumed rate's, which one leaked unit follows when the server is as fast as the dialect
// assumes; a slower one throttles, and the share halves (see observe).
func (d *declaredStrategy) probeInterval(t int64, m *model) int64 {
	prior := m.declaredInterval()
	places := max(m.limit/2, 1) - 1
	base := max(m.rtt.srtt, 1)
	last, sent := m.sends.last()
	// The places free: the newest answer's, less the requests still on their way.
	free := d.level - int64(m.inFlight)
	if places <= 0 || !m.rtt.seen || base >= prior || !sent || free <= 1 {
		return prior
	}
	g := math.Pow(float64(prior)/float64(base), 1/float64(places))
	return int64(min(max(float64(last-d.measureFrom)*(g-1), float64(base)), float64(prior)))
}

// reserve is what a refilling quota keeps back from the credit: the requests the declared rate
// admits within the jitter margin, rounded up, once the margin passes what the headroom absorbs.
// Paced sends leave their slots late by the sender's scheduling and arrive late by the network's
// jitter, so two can reach the server closer than the spacing. The headroom keeps Headroom of each
// spacing: a lateness under that is absorbed by it alone. A larger one needs requests left in the
// bucket, one per spacing the margin spans; a bucket spent to its last request throttles the first
// pair that bunches (and a throttle costs its Retry-After, a second at least where it is written
// in whole seconds). At 200/s (5 ms spacing, 25 µs of headroom) any measurable jitter keeps one
// back; at one an hour (18 s of headroom) none is kept, and a burst of two is spent whole. A whole
// quota keeps none: it comes back at its reset.
func (d *declaredStrategy) reserve(m *model) int64 {
	iv := m.declaredInterval()
	margin := m.rtt.margin(m.tun.JitterMargin)
	if iv <= 0 || float64(margin) <= m.tun.Headroom*float64(iv) {
		return 0
	}
	return (margin + iv - 1) / iv
}

// halveShare halves this client's share of the quota, as another client spends it (see observe),
// and sets how fast it regrows where no answer can show spare (spareUnseen).
func (d *declaredStrategy) halveShare(s *Signal, m *model) {
	m.share = max(m.share/2, minShare)
	d.shareCutAt = s.Answered
	d.regrow = m.share * m.tun.DeclaredBudget
}

// cushionless reports whether a refilling quota (or one of a kind not yet known) cannot keep back
// the reserve the jitter margin asks for (see reserve): no answer since it was declared said more
// left than that, so the bucket holds no more than the reserve (a bucket of one, as x/time/rate
// with a burst of 1 behind tollbooth, or throttled's GCRA without a burst). Two paced requests
// that the jitter brings closer than the spacing find it empty, so the pace itself carries the
// margin, and a request that left late is followed a whole spacing after it (plan).
func (d *declaredStrategy) cushionless(m *model) bool {
	r := d.reserve(m)
	return d.levelsSaid(m) && r > 0 && d.mostLeft < r
}

// spareUnseen reports whether no answer of a refilling quota (or one of a kind not yet known) can
// show spare quota: none since it was declared said more left than the reserve and the one
// request the spare rule asks beyond it (observe), so the bucket never held more. A share halved
// there climbs back by itself (Tuning.DeclaredBudget).
func (d *declaredStrategy) spareUnseen(m *model) bool {
	return d.levelsSaid(m) && d.mostLeft <= 1+d.reserve(m)
}

// levelsSaid reports whether the quota refills (or its kind is not known yet) and its answers
// said what was left, the evidence cushionless and spareUnseen judge by. A quota whose rate the
// dialect assumes is measured from its levels instead (leakMeter).
func (d *declaredStrategy) levelsSaid(m *model) bool {
	return !m.rateAssumed && d.leftSaid && (m.kind == KindRefilling || m.kind == KindUnknown)
}

// resetBeyond reports whether a reset said as reset, overstating the true time by less than grain
// (its unit's rounding: the true time is in (reset-grain, reset]), is for sure beyond window: a
// quota restored only after more than its window weighs a past window (a sliding window counter).
func resetBeyond(reset, grain, window int64) bool {
	if grain > 0 {
		return reset-grain >= window
	}
	return reset > window
}

// minShare is the least share of the declared rate a client paces at: one in a thousand clients
// on a key (a share below it would take a client longer than a thousand windows per request).
const minShare = 1.0 / 1000

// maxWindowLimit bounds the client-side window's memory (one 8-byte slot per request in it, held
// by the pacer only while a window is set): 65,536 slots are 512 KiB for a key, room for any
// per-second or per-minute quota and GitHub's 5,000 or 15,000 an hour. A declared limit above it is
// kept by the pace and the holds alone. The window is seeded from the send log, which holds the
// latest sendLogSize sends; it records every send itself from then on.
const maxWindowLimit = 1 << 16

func ceilSecond(d int64) int64 {
	s := int64(time.Second)
	return (d + s - 1) / s * s
}

func durationOf(ns int64) time.Duration { return time.Duration(ns) }

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

var debugDeclared func(string)
