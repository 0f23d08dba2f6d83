package throttle

import (
	"math"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// The burst allowance of an Adaptive limiter: how many requests may go at once, without waiting
// for the pace, because the server said that much of its quota remains; and the hold that makes
// requests wait for the reset of a window that has nothing left.
//
// Allowance. A response that says r requests remain (RateLimit r, X-RateLimit-Remaining) tells
// what the server would admit at the instant it answered. Every request sent but not answered yet
// when the response is observed was not counted in r (it had not arrived, or it arrived after this
// one was decided), so the limiter may let up to r - inflight go at once. Each send spends one.
// That holds for every algorithm: remaining quota never shrinks with time alone (a window's count
// and a bucket's tokens only come back), so the estimate is a lower bound of what is left for a
// client that has the key to itself.
//
// Order. Responses can arrive out of order, and an older response counts fewer of the requests
// before it: trusting it would count twice what it did not see. The limiter takes a response as
// the newest state only when its request was certainly sent after the last response taken was
// observed: the send matched with a response (the oldest one still in flight) is never later than
// the real one, so a send after that observation means a decision after it. Any other response
// can only lower the allowance (the minimum of the two estimates).
//
// Reserve. The allowance leaves a few requests of what remains unspent: the server counts
// arrivals, and a request that the network or the scheduler delays more than the ones behind it
// bunches them up at the server. A limiter that spent every token the instant it was reported
// would leave the server no slack for that, and each bunch would draw a throttle whose
// Retry-After (a whole second at least) costs far more than the requests kept back. The reserve
// is what the declared rate admits in jitterReserve (20 ms), but no more than 1% of the quota (a
// window's quota that comes back whole is paced out by that much more each cycle): none below 25
// requests per second, 2 of a quota of 200 per second, 10 of 1,000 per second. The pace below the
// declared rate lets the server's slack grow back to it, and only what remains beyond it goes at
// once.
//
// Claims. The remaining count is clamped to the quota the server declares (the limit of this
// response or, failing that, of an earlier one), and a server that declares no quota gives no
// allowance (its remainder is only spread, see learnRemaining). A throttle that comes while the
// allowance says there is room, or that itself claims room, shows that the remaining count is not
// the quota that binds (a lie, a second policy, or other clients on the same key): from then on
// it gives no allowance, until what was learned is forgotten. So does a newer response that
// counts less than the allowance left after this limiter's own sends: quota went that it did not
// spend. With more requests in flight than
// the send ring remembers, the in-flight count is not known, and the allowance is zero.
//
// Hold. When nothing remains, the pace goes on: a bucket's tokens, a window counter's weight
// and a sliding log's entries come back a little at a time. A fixed window's quota (and a sliding
// log's, after a burst) comes back whole at the reset instead, and a request paced into it draws
// a throttle, whose Retry-After (whole seconds, rounded up) pauses the key past the window's
// start. The limiter learns which kind the server is: when a throttle found the quota empty, and
// after the pause at least half the quota was admitted within a quarter of the window (declared,
// or guessed from the resets when the server declares a limit alone: see windowGuess; the reset
// of the response itself while there is no guess yet), the quota comes back whole. From then on, when a response says nothing remains and the whole quota was
// sent since the last hold, the next request waits until the reset (the earliest instant the
// responses of the cycle announced: each reset is rounded up, so the earliest is the closest).
// Less than the whole quota sent is a sliding log whose entries are still leaving: the pace goes
// on. A reset further away than the declared window is no window's (a window counter's while both
// of its windows weigh) and holds nothing.
//
// Sharing. Bursting is right for a limiter alone on its key: with others, the one that bursts
// takes what the others would pace into. Besides the contradictions above, more than
// maxEmptyThrottles throttles within throttleMemory end the allowance as well: alone, a limiter
// draws one to learn that the quota comes back whole, and one at the start of a window counter;
// with others on the key, a cycle never gets the whole quota, so the pace goes on into an empty
// window and draws more.
type allowance struct {
	trusted bool  // a response set the allowance
	at      int64 // when the newest trusted response was observed
	// quota is the last quota (limit) a response declared, 0 when none; reserve is how much of
	// what remains is kept back (see Reserve above).
	quota   int64
	reserve int64
	// distrust is set when a throttle contradicted the remaining count.
	distrust bool

	// resetAt is the earliest reset instant announced by the trusted responses since the last
	// reset instant passed; cycle is when the first of them was observed.
	resetAt  int64
	hasReset bool
	cycle    int64

	// windowed tells that the quota comes back whole at its reset (see Hold above).
	windowed bool
	// judging is set after a throttle that found the quota empty, until the cycle that follows
	// has told whether the quota came back whole: got counts the successes since, the first of
	// them at gotFrom.
	judging bool
	got     int64
	gotFrom int64
	// heldFor is the reset the last hold waited for, and holdEnd when that hold ended: the
	// reset and a slack (see holdSlackDiv). burstLag is how long after a hold's end the
	// first burst of its cycle was granted (0: not known); delayed is set when the current cycle's
	// second request was made to wait that long (see Hold above), and burst when its first burst
	// was granted.
	heldFor, holdEnd, burstLag int64
	delayed, burst             bool
	// cycleSent counts the requests sent since the last hold began.
	cycleSent int64
	// throttles counts the throttles that found the quota empty, since the first of them
	// within throttleMemory (firstThrottle is when that was), each empty window once: a throttle
	// for a request sent before the last one counted came back (lastThrottle) is the same one.
	throttles     int
	firstThrottle int64
	lastThrottle  int64
}

// throttleMemory and maxEmptyThrottles: more than maxEmptyThrottles throttles that found the quota
// empty within throttleMemory mean that the limiter is not alone on its key. Alone, it draws one
// to learn that the quota comes back whole, and one at the start of a window counter.
const (
	throttleMemory    = int64(30 * time.Second)
	maxEmptyThrottles = 2
)

// holdSlackDiv: a hold for a window's reset ends a window/holdSlackDiv after it (2 ms of a
// second). Each cycle then begins a little later than the one before ended: against a sliding
// log, whose places free up one by one as the last cycle's requests age, every request of a cycle
// reaches the server that much after the one whose place it takes, rather than racing it.
const holdSlackDiv = 500

// jitterReserve is how much bunching at the server the allowance leaves room for: it keeps back
// what the declared rate admits in this time (see Reserve above).
const jitterReserve = 20 * time.Millisecond

// reserveFor returns the reserve for a declared quota of limit per window: what that rate admits
// in jitterReserve, rounded to the nearest request, and at most 1% of limit, rounded up. It is 0
// for a slow quota (under 25 per second: a whole request is more than the jitter there), and when
// the window is not known.
func reserveFor(limit int64, window time.Duration) int64 {
	if limit <= 0 || window <= 0 {
		return 0
	}
	n := min(math.Round(float64(limit)*float64(jitterReserve)/float64(window)), math.Ceil(float64(limit)/100))
	if !(n >= 1) {
		return 0
	}
	return int64(n)
}

// allowanceDecision is what one response does to the pacer: the new allowance, and whether to
// change the hold (hold 0: none).
type allowanceDecision struct {
	burst   int64
	setHold bool
	hold    int64
}

// observe applies one response to the allowance. cur is the allowance before the response (after
// the sends since the last one), inflight the requests still in flight, sent when the response's
// request left (an estimate never later than the truth; known is false when there is none), t
// when the response was observed.
func (al *allowance) observe(t, sent int64, known bool, throttled bool, info ratelimitheader.Info, inflight int, cur int64) allowanceDecision {
	if info.Limit > 0 {
		al.quota = info.Limit
		al.reserve = reserveFor(info.Limit, info.Window)
	}
	if al.distrust {
		return allowanceDecision{setHold: true}
	}
	if throttled {
		if cur > 0 || (info.HasRemaining && info.Remaining > 0) {
			al.distrust = true
			return allowanceDecision{setHold: true}
		}
		if known && al.throttles > 0 && sent <= al.lastThrottle {
			// Sent before the last throttle came back: the same empty window, found by another
			// request that was already on its way (jitter can land two in it).
			return allowanceDecision{}
		}
		if al.throttles == 0 || t-al.firstThrottle > throttleMemory {
			al.throttles, al.firstThrottle = 0, t
		}
		al.lastThrottle = t
		if al.throttles++; al.throttles > maxEmptyThrottles {
			al.distrust = true
			return allowanceDecision{setHold: true}
		}
		// The quota was empty: what comes back after the pause tells whether it is a window.
		al.judging, al.got = true, 0
		al.trusted, al.at = true, t
		return allowanceDecision{}
	}
	if al.judging {
		if al.got == 0 {
			al.gotFrom = t
		}
		al.got++
	}
	if !info.HasRemaining || al.quota <= 0 {
		return allowanceDecision{burst: cur}
	}
	r := min(info.Remaining, al.quota)
	est := int64(0)
	if inflight < sendRingSize {
		est = max(r-int64(inflight)-al.reserve, 0)
	}
	newer := !al.trusted || (known && sent > al.at)
	if newer && al.trusted && est < cur-max(1, al.quota/100) {
		// Quota went that this limiter did not spend: other clients share the key (or the
		// count is not the quota that binds). Bursting would take their share.
		al.distrust = true
		return allowanceDecision{setHold: true}
	}
	al.trusted, al.at = true, t
	d := allowanceDecision{burst: min(cur, est)}
	if newer {
		d.burst = est
		if info.HasReset {
			at := t + int64(info.Reset)
			if !al.hasReset || al.resetAt <= t {
				al.resetAt, al.hasReset, al.cycle = at, true, t
			} else {
				al.resetAt = min(al.resetAt, at)
			}
		}
	}
	if d.burst > 0 {
		if !al.burst && al.holdEnd > 0 && t >= al.holdEnd {
			// The first burst since the hold ended: how long after it. A wait the limiter imposed
			// itself (delayed) is not measured again, nor one longer than an eighth of the window
			// (the callers were idle: nothing is measured, and the last lag stands).
			al.burst = true
			if lag := t - al.holdEnd; !al.delayed && info.Window > 0 && lag <= int64(info.Window)/8 {
				// The longest lately: it decays by an eighth a cycle.
				al.burstLag = max(lag, al.burstLag-al.burstLag/8)
			}
		}
		d.setHold = true // quota left: no hold
		return d
	}
	// Nothing left, said by the newest response or by one decided in the same cycle.
	if r > 0 || !(newer || (known && sent >= al.cycle)) {
		return d
	}
	if al.heldFor == al.resetAt && al.resetAt > t {
		d.setHold, d.hold = true, al.holdEnd // already waiting for this reset
		return d
	}
	switch {
	case al.judging:
		// The span the quota comes back in: the declared (or guessed) window or, while there is
		// none, the reset this response announces.
		span := int64(info.Window)
		if span <= 0 && info.HasReset {
			span = int64(info.Reset)
		}
		switch {
		case span > 0 && al.got > 0 && t-al.gotFrom >= span/4:
			// Too slow for a quota that comes back whole: a bucket's tokens come back a little at
			// a time (and half of them may still come back before the reset).
			al.windowed, al.judging = false, false
		case 2*al.got >= al.quota:
			al.windowed, al.judging = true, false
		default:
			return d // undecided: a sliding log's entries may still be leaving
		}
	case !al.windowed:
		return d
	case al.cycleSent < al.quota:
		// Less than the quota sent since the last hold: a sliding log's entries are still
		// leaving (or others took some; then the pace draws throttles, and they are found out).
		// Right after a hold, the first request took the place of the last cycle's first one,
		// and the burst after it left a round trip later: the next place frees up about as long
		// after this hold. The next request waits twice that lag (it is measured to the burst's
		// grant; the burst's requests reach the server later still, by the callers waking up
		// and the way there), rather than going at the pace into the full log.
		if al.burstLag > 0 && !al.burst && !al.delayed && t >= al.holdEnd {
			if next := al.holdEnd + 2*al.burstLag; next > t {
				al.delayed = true
				d.setHold, d.hold = true, next
			}
		}
		return d
	}
	if al.windowed && al.hasReset && al.resetAt > t && (info.Window <= 0 || info.Reset <= info.Window) {
		al.cycleSent = 0
		al.heldFor, al.burst, al.delayed = al.resetAt, false, false
		al.holdEnd = al.resetAt + int64(info.Window)/holdSlackDiv
		d.setHold, d.hold = true, al.holdEnd
	}
	return d
}

// sent notes a request sent.
func (al *allowance) sent() { al.cycleSent++ }

// active reports whether remaining counts give an allowance (a quota was declared and no
// throttle contradicted them).
func (al *allowance) active() bool { return !al.distrust && al.quota > 0 }
