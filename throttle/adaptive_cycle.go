package throttle

import "time"

// windowCycles learns a quota that comes back whole, from a server that says nothing but 429: a
// fixed window or a sliding log without rate-limit headers. Such a server admits a burst of its
// whole quota, then refuses everything until the window ends (a fixed window) or the burst's
// entries leave the log (a sliding log), then admits a whole quota again. An even pace at the
// rate it allows wastes the quota that a fresh window offers at once: 2,000 requests against 200
// per second take 10 s evenly paced (the first burst is followed by a second of nothing) and 9 s
// in window bursts, and without headers the even pace cannot do better.
//
// Learning. The limiter watches for a burst followed by a wall: at least cycleMinQuota successes,
// then throttles only, for at least cycleMinWall and cycleWallRatio times as long as the burst
// took, with throttles until at least halfway through it (a silence, while the control law
// backed off or the callers paused, proves nothing). The first success after the wall (sent
// after the first throttled request of the wall) ends it. The guess is then a quota of S (the
// successes of the burst) per P (from the first request of the burst to the one that ended the
// wall, in send times). A token bucket does not look like that: it admits one request per
// interval after its burst, and a blind slow start finds those long before a tenth of a second
// passes.
//
// Cycles. From the guess on, every cycle begins with a success: the one that ended a wall, or
// the first for a request sent after the last cycle's hold. The limiter then lets what is left of
// the quota go at once (the burst allowance), and holds every request after those until P
// (stretched by cycleSlack, plus up to as much again) after the cycle began: the next window, or
// the moment the burst's entries have left the log. The first request after the hold goes at the
// pace of the control law, and its success begins the next cycle. The first cycle is a
// probation: its allowance grows by one per success (the requests in flight double every round
// trip), and a throttle before half the quota was admitted refutes the guess for good (until
// what was learned is forgotten), at the cost of a round trip's requests at most.
//
// Search. The first wall tells the period only roughly: the success that ended it came after a
// throttled request, and the control law spaces those out during a wall (a tenth of a second
// apart, or more). The period lies between the two: after the last request that was throttled,
// up to the first that was admitted. Each later cycle narrows that down: its hold ends halfway
// between the two bounds, and the first request after it either draws a throttle (the lower
// bound moves up, and the hold moves to the next halfway point) or begins the next cycle (the
// upper bound moves down to when it was sent). When the bounds are within cycleSlack of the
// period, the hold ends at the upper bound plus that slack. Each step costs one throttle, or the
// requests sent within one round trip, and the search ends within a handful of cycles. The
// bounds are those of a sliding log, whose quota comes back P after the first request of the
// last burst; a fixed window's comes back P after the window began, which can be earlier, so
// against one the cycles keep the lag with which the first of them began.
//
// Growth. A quota that grew would never be found by cycles that send exactly the quota. Every
// cycleProbeEvery-th cycle probes the tail: once the quota is spent, it lets one more request
// go at a time while they are admitted, and the quota becomes what the cycle admitted (at most
// twice what it was). The probe ends at the first throttle, which costs that one request (the
// window is full: it is retried in a later cycle).
//
// Sharing. A limiter that bursts into each window as it opens takes all of it: others on the key
// that pace evenly find it full whenever they ask, and nothing tells the bursting one that they
// are there. So every cycleProbeEvery-th cycle waits cycleListen of the period longer (a
// listening gap, which costs a little over 1% of the throughput): quota that others take in the
// gap makes the burst after it draw throttles, and then the guess is refuted at once, and the
// control law cuts its rate to half the quota per period and converges with the others' from
// there. More than cycleMaxStrikes other cycles whose bursts draw throttles within
// throttleMemory do the same.
//
// Corrections. A wall (nothing admitted until after the hold) means that the quota took longer
// to come back than the period: the longest is kept (a fixed window entered late in its first
// window makes the first guess short by the phase: one wall corrects it), and a quota that the
// server admitted less of shrinks to what it admitted. More than cycleMaxWalls walls within
// throttleMemory mean that the quota does not come back whole (the server is no window, or
// changes its mind): the guess is refuted, and the control law alone paces the key.
//
// The cycles are only for servers that say nothing: any response with a rate-limit field, or a
// throttle with a Retry-After (it pauses the key, and a pause looks like a wall), hands the key
// to the header-driven allowance and the control law for good.
type windowCycles struct {
	off  bool // refuted, or the server sends rate-limit headers
	mode cycleMode

	// The current cycle (or, before a guess, the current burst): the send time of its first
	// success, of its latest success, and how many succeeded; walled is set by a throttle for a
	// request sent after the latest success (at wallAt), until a success ends the wall.
	started bool
	begin   int64
	lastOK  int64
	got     int64
	walled  bool
	wallAt  int64
	// sent counts the requests sent since the cycle began.
	sent int64
	// hold is the end of the current cycle's hold (requests sent at or after it belong to the next
	// cycle).
	hold int64

	quota  int64 // S: the quota that comes back whole
	period int64 // P: how long it takes to come back at most, in nanoseconds (proved by a success)
	// early is how long after a cycle's start the quota was not back yet (a throttle proved it),
	// 0 when not known; lastNo is the latest send time of a request throttled in the wall.
	early  int64
	lastNo int64

	// lossy is set when a request of the current cycle (before its tail probe) was throttled;
	// tailAt is when the cycle's tail probe began (its first request beyond the quota was sent),
	// 0 when it has not; cycles counts the cycles since the guess.
	lossy    bool
	tailAt   int64
	tailFrom int64 // the quota when the tail probe began
	// grewFrom is the quota before a tail probe raised it, until the cycle after it came back
	// whole; 0 when the quota did not grow.
	grewFrom int64
	// maxRate bounds quota per period (WithRateBounds); 0 for none.
	maxRate float64
	cycles  int64
	// listenNext is set when the current cycle's hold ends cycleListen later (a listening gap),
	// listening when the current cycle began after one.
	listenNext, listening bool

	// strikes counts the cycles whose burst drew throttles since firstStrike (others took some
	// of the quota), walls the walls since firstWall (the period or the quota was off).
	strikes     int
	firstStrike int64
	walls       int
	firstWall   int64
}

type cycleMode uint8

const (
	cycleNone      cycleMode = iota // no guess
	cycleProbation                  // guessed: the first cycle tests it
	cycleConfirmed                  // a cycle admitted at least half the quota
)

const (
	// cycleMinQuota is the smallest burst that can start a guess.
	cycleMinQuota = 4
	// cycleMinWall is the shortest wall that can start a guess, and cycleWallRatio how many
	// times as long as the burst before it a wall lasts at least.
	cycleMinWall   = int64(100 * time.Millisecond)
	cycleWallRatio = 4
	// cycleSlack stretches the period (as a fraction of it): the server counts arrivals, and the
	// network delays some requests more than others.
	cycleSlack = 0.01
	// cycleMaxStrikes is how many cycles whose burst draws throttles, and cycleMaxWalls how many
	// walls, within throttleMemory a guess survives.
	cycleMaxStrikes = 2
	cycleMaxWalls   = 4
	// cycleProbeEvery: every so many cycles probe for a larger quota.
	cycleProbeEvery = 4
	// cycleListen is the listening gap (as a fraction of the period) before every
	// cycleProbeEvery-th cycle (see Sharing above).
	cycleListen = 0.05
	// cycleProbeInFlight is how many of the quota may still be in flight when the tail probe
	// begins.
	cycleProbeInFlight = 16
)

// cycleDecision is what a response does to the pacer under a guess: when act is set, the
// allowance becomes grant and the hold becomes hold (0: none).
type cycleDecision struct {
	act   bool
	grant int64
	hold  int64
	// dropped is the rate, in requests per second, of a confirmed guess that was dropped (its
	// quota per period), 0 when none was: the cycles sent at that rate, and drew throttles.
	dropped float64
}

// guessing reports whether a guess is in force (the cycles set the allowance and the hold).
func (w *windowCycles) guessing() bool { return w.mode != cycleNone }

// noted records a request sent at slot.
func (w *windowCycles) noted(slot int64) {
	if w.mode != cycleNone && slot >= w.begin {
		if w.sent++; w.sent > w.quota && w.tailAt == 0 {
			w.tailAt, w.tailFrom = slot, w.quota
		}
	}
}

// probing reports whether the current cycle probes its tail.
func (w *windowCycles) probing() bool {
	return w.mode == cycleConfirmed && w.cycles%cycleProbeEvery == 0
}

// headers hands the key to the header-driven allowance: the cycles stop for good. The decision
// clears what a guess had set.
func (w *windowCycles) headers() cycleDecision {
	if w.off {
		return cycleDecision{}
	}
	if w.mode == cycleNone {
		*w = windowCycles{off: true}
		return cycleDecision{}
	}
	return w.refute(false)
}

// refute drops the guess for good and clears what it had set; shared tells that others use the
// key (the control law then cuts its rate, see cycleDecision.dropped).
func (w *windowCycles) refute(shared bool) cycleDecision {
	d := cycleDecision{act: true}
	if shared && w.mode == cycleConfirmed && w.period > 0 {
		d.dropped = float64(w.quota) / time.Duration(w.period).Seconds()
	}
	*w = windowCycles{off: true}
	return d
}

// observe applies one response without rate-limit headers: its request was sent at sent, it was
// observed at t, and inflightSince(s) counts the requests still in flight that were sent at s or
// later.
func (w *windowCycles) observe(t, sent int64, throttled, retryAfter bool, inflightSince func(int64) int64) cycleDecision {
	switch {
	case w.off:
		return cycleDecision{}
	case throttled && retryAfter:
		return w.headers()
	case !w.started:
		if !throttled {
			w.restart(sent)
		}
		return cycleDecision{}
	case w.mode != cycleNone && sent >= w.hold:
		// The first request after the hold (or, in a wall, after its first throttle).
		if w.walled {
			if throttled {
				w.lastNo = max(w.lastNo, sent)
				return cycleDecision{}
			}
			return w.wallEnded(t, sent, inflightSince)
		}
		if throttled {
			return w.tooEarly(sent)
		}
		return w.onTime(t, sent, inflightSince)
	case throttled:
		return w.throttle(t, sent)
	}
	if w.walled && sent > w.wallAt {
		// A success for a request sent after a throttled one ends a wall, if it was one: a
		// throttle within a burst (a request that lost a race at the server) is none.
		if w.mode == cycleNone && sent-w.lastOK >= cycleMinWall || w.mode != cycleNone && sent-w.begin >= w.period/2 {
			return w.wallEnded(t, sent, inflightSince)
		}
		w.walled = false
	}
	if sent < w.begin {
		return cycleDecision{} // from before this cycle: counted in the last one
	}
	w.got++
	w.lastOK = max(w.lastOK, sent)
	switch {
	case w.mode == cycleProbation:
		// The allowance grows by one per success: the requests in flight double every round trip.
		return cycleDecision{act: true, grant: min(w.left(), w.got), hold: w.hold}
	case w.tailAt > 0 && w.got > w.quota:
		// More than the quota was admitted in this cycle: a probe beyond it was. Probe on, up to
		// twice the quota the cycle began with (a probe that outlasts a fixed window finds the
		// next one's quota), and no faster than the maximum rate.
		w.grewFrom, w.quota = w.tailFrom, w.got
		if w.got >= 2*w.tailFrom || w.over(w.quota+1, w.period) {
			return cycleDecision{}
		}
		return cycleDecision{act: true, grant: 1, hold: w.hold}
	case w.probing() && w.sent >= w.quota && w.tailAt == 0 && w.got >= w.quota-int64(cycleProbeInFlight):
		// The quota is spent and nearly all of it admitted: the tail probe begins.
		return cycleDecision{act: true, grant: 1, hold: w.hold}
	}
	return cycleDecision{}
}

// throttle applies a throttle for a request sent at sent, before the current cycle's hold.
func (w *windowCycles) throttle(t, sent int64) cycleDecision {
	if w.mode != cycleNone && sent >= w.begin {
		if w.tailAt > 0 {
			// The tail probe found the window full: it ends. (Any throttle once the tail probe
			// began counts as its end: responses are matched with sends in order, and one
			// overtaken on the way can be matched with an earlier send.)
			return cycleDecision{}
		}
		w.lossy = true
	}
	if sent >= w.lastOK {
		if !w.walled {
			w.walled, w.wallAt = true, sent
		}
		w.lastNo = max(w.lastNo, sent)
	}
	if w.mode == cycleProbation && sent >= w.begin && 2*w.got < w.quota {
		return w.refute(false) // the first cycle found no quota that comes back whole
	}
	return cycleDecision{}
}

// tooEarly applies a throttle for a request sent at or after the hold, before any success after
// it: the quota was not back yet.
func (w *windowCycles) tooEarly(sent int64) cycleDecision {
	w.early = max(w.early, sent-w.begin)
	if w.early < w.period {
		w.hold = w.begin + w.holdAfter()
		if w.listenNext {
			w.hold += int64(float64(w.period) * cycleListen)
		}
		return cycleDecision{act: true, hold: w.hold}
	}
	// Not back within the period: the wall lasts longer than thought (the first guess was made
	// late in a window, or the server changed). The control law finds its end.
	w.walled, w.wallAt, w.lastNo = true, sent, sent
	return cycleDecision{act: true}
}

// onTime applies the first success after the hold: the quota is back, and a cycle begins.
func (w *windowCycles) onTime(t, sent int64, inflightSince func(int64) int64) cycleDecision {
	if w.lossy && w.grewFrom > 0 {
		// The quota that a tail probe found was more than comes back: back to what it was.
		w.quota, w.grewFrom, w.lossy = w.grewFrom, 0, false
	}
	if w.lossy && (w.listening || w.strike(t)) {
		// Throttles in a burst after a listening gap: others took quota meanwhile.
		return w.refute(true)
	}
	if w.mode == cycleProbation && 2*w.got >= w.quota {
		w.mode = cycleConfirmed
	}
	if d := sent - w.begin; d < w.period && !w.listening {
		w.period = d // back sooner than thought
		if d <= w.early {
			w.early = 0 // contradicts an earlier throttle (the server changed): search anew
		}
	}
	return w.startCycle(sent, inflightSince)
}

// wallEnded applies the success, for a request sent at sent, that ended a wall.
func (w *windowCycles) wallEnded(t, sent int64, inflightSince func(int64) int64) cycleDecision {
	wall, burst := sent-w.lastOK, w.lastOK-w.begin
	switch w.mode {
	case cycleNone:
		// The server refused all along: a wall with a long silence in it (the limiter backed off,
		// or its callers paused) proves nothing.
		dense := w.lastNo > w.lastOK && sent-w.lastNo <= wall/2
		if w.got >= cycleMinQuota && wall >= cycleMinWall && wall >= cycleWallRatio*burst && dense &&
			!w.over(w.got, sent-w.begin) {
			w.quota, w.period, w.mode = w.got, sent-w.begin, cycleProbation
			if w.lastNo > w.begin {
				w.early = w.lastNo - w.begin
			}
			return w.startCycle(sent, inflightSince)
		}
		w.restart(sent)
		return cycleDecision{}
	case cycleProbation:
		w.mode = cycleConfirmed
	}
	if sent-max(w.lastNo, w.hold) > wall/2 {
		// A silence ended it (the callers were idle, past the hold), not the server: it tells
		// nothing of the period. The quota is back: a cycle begins.
		w.lossy = false
		return w.startCycle(sent, inflightSince)
	}
	// A wall in a guessed cycle: the quota took longer to come back than the period (the longest
	// is kept), or the server admitted less of it than the guess (the quota shrinks).
	if w.lossy && w.grewFrom > 0 {
		// The quota that a tail probe found was more than comes back (a probe that the network
		// delayed past the window's end): back to what it was.
		w.quota, w.grewFrom, w.lossy = w.grewFrom, 0, false
	}
	if w.lossy && (w.listening || w.strike(t)) {
		return w.refute(true)
	}
	w.lossy = false
	if count(&w.walls, &w.firstWall, t) > cycleMaxWalls {
		return w.refute(false)
	}
	if d := sent - w.begin; d > w.period {
		w.period = d
		if w.lastNo > w.begin {
			w.early = max(w.early, w.lastNo-w.begin)
		}
	}
	if w.got < w.quota {
		w.quota = max(w.got, 1)
	}
	return w.startCycle(sent, inflightSince)
}

// over reports whether quota per period would exceed the maximum rate.
func (w *windowCycles) over(quota, period int64) bool {
	return w.maxRate > 0 && (period <= 0 || float64(quota) > w.maxRate*time.Duration(period).Seconds())
}

// strike counts a cycle whose burst drew throttles, at t; it reports whether the guess is
// refuted.
func (w *windowCycles) strike(t int64) bool {
	return count(&w.strikes, &w.firstStrike, t) > cycleMaxStrikes
}

// count adds an event at t to n, the events since first within throttleMemory, and returns n.
func count(n *int, first *int64, t int64) int {
	if *n == 0 || t-*first > throttleMemory {
		*n, *first = 0, t
	}
	*n++
	return *n
}

// restart begins watching a new burst with the success of a request sent at sent.
func (w *windowCycles) restart(sent int64) {
	w.started, w.begin, w.lastOK, w.got, w.walled, w.lastNo = true, sent, sent, 1, false, 0
}

// startCycle begins a cycle with the success of a request sent at sent: what is left of the
// quota goes at once, and the requests after it wait for the hold.
func (w *windowCycles) startCycle(sent int64, inflightSince func(int64) int64) cycleDecision {
	if w.tailAt == 0 {
		w.grewFrom = 0 // the cycle after the growth came back whole: the quota stands
	}
	w.restart(sent)
	w.lossy, w.tailAt = false, 0
	w.cycles++
	w.listening, w.listenNext = w.listenNext, w.mode == cycleConfirmed && w.cycles%cycleProbeEvery == cycleProbeEvery/2
	w.sent = inflightSince(sent) + 1
	w.hold = sent + w.holdAfter()
	if w.listenNext {
		w.hold += int64(float64(w.period) * cycleListen)
	}
	grant := w.left()
	if w.mode == cycleProbation {
		grant = min(grant, w.got)
	}
	return cycleDecision{act: true, grant: grant, hold: w.hold}
}

// holdAfter is how long after a cycle's start its hold ends: halfway between the bounds of the
// period while they are further apart than the slack, else the period plus the slack.
func (w *windowCycles) holdAfter() int64 {
	slack := int64(float64(w.period) * cycleSlack)
	if w.period-w.early > slack {
		return w.early + (w.period-w.early)/2
	}
	// Plus up to as much again, drawn from the cycle's start: a limiter that shares the key with
	// others, which do not burst, leaves them a chance at the quota as it comes back, and the
	// throttles that follow in its own cycles tell it that it is not alone (see Corrections).
	spread := int64((uint64(w.begin) * 0x9E3779B97F4A7C15) >> 40) // uniform in [0, 2^24)
	return w.period + slack + int64(float64(slack)*float64(spread)/(1<<24))
}

// left is how many more requests the current cycle may send at once. A cycle spends the whole
// quota, unlike the header-driven allowance, which keeps a reserve: quota left unspent would let
// the first request after a hold through before the quota is back, and the search would learn a
// period too short.
func (w *windowCycles) left() int64 {
	return max(w.quota-w.sent, 0)
}

// learned reports the quota and period guessed, zero when there is no guess.
func (w *windowCycles) learned() (quota int64, period time.Duration) {
	if w.mode == cycleNone {
		return 0, 0
	}
	return w.quota, time.Duration(w.period)
}
