package redisthrottle

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/steadyhttp/steady/throttle/learn"
)

// The shared rate law (docs/shared-learner.md): learn.RateLaw, run in Go by the process that has
// evidence, on the state kept in Redis and written back by compare-and-set on its version.
const (
	// lawAttempts bounds how often one piece of evidence is applied again after another process
	// wrote the law first. Each conflict means another process's write landed in the time of one
	// round trip; four in a row is a key written by more processes than the round trip can
	// serialise, where one process's successes waiting for the next advance cost nothing (they stay
	// counted in Redis) and a throttle dropped errs towards the pace before it.
	lawAttempts = 4
	// maxAdmitBatch bounds the successes one advance applies (the law takes one step per success,
	// some 50 ns): a process that finds a law far behind the count (a state that expired, or one
	// written by an older format) catches up over several calls, a millisecond at most each.
	maxAdmitBatch = 4096
)

// newLaw returns a fresh shared law for cfg: its initial pace, rate bounds and headroom.
func newLaw(cfg config) (*learn.RateLaw, error) {
	tun := learn.DefaultTuning()
	tun.Headroom = cfg.headroom
	return learn.NewRateLaw(cfg.initial, learn.WithRateBounds(cfg.minRate, cfg.maxRate), learn.WithTuning(tun))
}

// redisTime converts a time on the caller's clock to Redis's, with the offset measured on the last
// reservation.
func (l *Limiter) redisTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(time.Duration(l.offset.Load()))
}

// advance applies the successes every process reported (sc, as counted in Redis when the law was
// at version lv) to the law, at now on the caller's clock, within ctx (the reservation's deadline;
// rtt is what the reservation's call took). It writes the law back when that made an event (a
// search step, a cruise that turned to a probe, a probe that held) or moved the pace by more than
// moveThreshold since it was last read or written. It never waits for the law: while another
// goroutine of this process holds it (a throttle being written), this advance is skipped. Nor
// does it start calls the deadline leaves no time for (a read and a write, one round trip each,
// as long as the reservation's), or retry: when another process wrote first, or Redis did not
// answer in time, the successes wait in Redis's count for the next advance (a slow call here is
// not taken for Redis down: the reservation was served; and one cut short would cost go-redis its
// connection).
func (l *Limiter) advance(ctx context.Context, now time.Time, rtt time.Duration, sc, lv int64) {
	if !l.tryLockLaw() {
		return
	}
	defer l.unlockLaw()
	read := lv != l.lawV || l.alone
	calls := time.Duration(1)
	if read {
		calls = 2
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < calls*rtt {
		return
	}
	if read {
		var err error
		if sc, err = l.readLaw(ctx, now); err != nil {
			l.noteError(err)
			return
		}
	}
	l.capLaw()
	evs := l.law.Admit(l.redisTime(now), l.unapplied(sc))
	l.logLaw(evs...)
	if r := l.law.Rate(); len(evs) == 0 && l.seed == 0 && math.Abs(r-l.lawRate) <= moveThreshold*l.lawRate {
		return
	}
	if _, err := l.writeLaw(ctx, now, false); err != nil {
		l.noteError(err)
	}
}

// throttled hands one throttled attempt, sent at sent and answered at now (the caller's clock), to
// the shared law, and writes the law back, applying it again to the newer state when another
// process wrote first (at most lawAttempts times). All of it, waiting for the law included, is
// within one timeout: a throttle that cannot have the law in time is counted as an error and
// dropped (the goroutines ahead of it are writing throttles of the same moment, most likely of the
// same epoch). On a Redis failure the law as this process holds it keeps the throttle, and paces
// the local fallback alone (learnalone.go).
func (l *Limiter) throttled(sent, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel()
	if !l.lockLaw(ctx) {
		l.noteError(fmt.Errorf("redisthrottle: the shared law was busy for %v: %w", l.cfg.timeout, ctx.Err()))
		return
	}
	defer l.unlockLaw()
	at := l.redisTime(now)
	ev := "" // what the throttle did to the law as this process holds it
	for i := range lawAttempts {
		if i > 0 || l.alone { // a law learned alone is not the shared one: read that first
			sc, err := l.readLaw(ctx, now)
			if err != nil {
				l.failAlone(now, err, ev)
				return
			}
			l.capLaw()
			l.law.Admit(at, l.unapplied(sc))
		}
		l.capLaw()
		ev = l.law.Throttle(l.sentForLaw(sent), at)
		ok, err := l.writeLaw(ctx, now, ev != "")
		if err != nil {
			l.failAlone(now, err, ev)
			return
		}
		if ok {
			if ev != "" {
				l.stats.cuts.Add(1)
				l.logLaw(ev)
			}
			return
		}
	}
}

// unapplied is how many of the successes counted in Redis (sc) the law has not applied yet, at
// most maxAdmitBatch. The law is held.
func (l *Limiter) unapplied(sc int64) int64 {
	return min(max(sc+l.seed-l.law.Successes(), 0), maxAdmitBatch)
}

// readLaw replaces the law with the state in Redis and returns the successes reported so far. A
// state that is unreadable (another format) reads as a fresh law. A missing one (a new key, or one
// Redis forgot: it expired, or Redis restarted without it) reads as a fresh law too, unless this
// process read or wrote the shared law within WithForget: then that law is restored, and written
// as the new state (it seeds it), so that a Redis restart does not send every process back to the
// startup. (Not a law learned alone meanwhile: it saw this process's share of the traffic, and
// would seed every process with a fraction of the rate.) The round trip this process measured is kept either way. now is
// the caller's clock. The law is held; the caller records a failure.
func (l *Limiter) readLaw(ctx context.Context, now time.Time) (sc int64, err error) {
	vals, err := l.client.HMGet(ctx, l.keys[0], "law", "lv", "sc", "cv").Result()
	if err == nil && len(vals) != 4 {
		err = errUnexpectedReply
	}
	if err != nil {
		return 0, err
	}
	state, _ := vals[0].(string)
	lv, sc := intOf(vals[1]), intOf(vals[2])
	l.seed = 0
	switch {
	case state == "" && lv == 0 && l.shared != nil && now.UnixNano()-l.sharedAt < int64(l.cfg.forget) &&
		l.law.UnmarshalBinary(l.shared) == nil && l.law.Successes() > 0:
		// Every success counted in the new state came after the law this process last shared
		// (those of the outage among them): all are to be applied.
		l.seed = l.law.Successes()
	case state == "" || l.law.UnmarshalBinary([]byte(state)) != nil:
		l.law.Reset()
	default:
		l.shared, l.sharedAt = []byte(state), now.UnixNano()
	}
	l.lawV, l.lawCV, l.lawRate, l.alone = lv, intOf(vals[3]), l.law.Rate(), false
	return sc, nil
}

// writeLaw stores the law if its version in Redis is still l.lawV, and reports whether it did; cut
// reports that the law cut its pace (the next slot is then one new spacing after now). The law is
// held; the caller records a failure.
func (l *Limiter) writeLaw(ctx context.Context, now time.Time, cut bool) (bool, error) {
	state, _ := l.law.MarshalBinary()
	startup, c := 1, 0
	if l.law.Active() {
		startup = 0
	}
	if cut {
		c = 1
	}
	start := time.Now()
	res, err := lawScript.Run(ctx, l.client, l.keys[:1], l.scriptNow(now), l.lawV, state, l.law.Rate(),
		startup, c, l.cfg.forget.Milliseconds(), l.seed).Int64Slice()
	// Redis restarted the clock during the call: placed from the call's end, no slot is early.
	end := now.Add(time.Since(start))
	if l.nowMicros != nil {
		end = now
	}
	if err == nil && (len(res) < 2 || res[0] == 1 && len(res) != 7) {
		err = errUnexpectedReply
	}
	if err != nil {
		return false, err
	}
	if res[0] != 1 {
		return false, nil
	}
	l.lawV, l.lawRate, l.seed, l.shared, l.sharedAt = res[1], l.law.Rate(), 0, state, now.UnixNano()
	if cut {
		l.lawCV = res[4]
	}
	l.learnRate(paceReply{
		redisNow: res[4], rate: float64(res[2]) / 1e6,
		g: res[4] - res[3], at: end.Add(-time.Duration(res[3]) * time.Microsecond), vg: res[5], vs: res[6],
		cut: l.lawCV, heardAt: end,
	})
	return true, nil
}

// capLaw bounds the law's pace by the rate the server declares (after headroom), which caps the
// shared pace anyway: the law then learns from paces that were really sent (a sliding window
// counter throttles a pace at its declared L per W; with no bound, the law searched and bisected
// above the cap, took each throttle at the cap for a higher test refuted, and came down to 3.2/s
// against a counter that sustains 4). The law is held.
func (l *Limiter) capLaw() {
	l.law.SetCeiling(math.Float64frombits(l.advertise.Load()))
}

// cutHeard is a cut of the shared law (when it was made, Redis µs) and when this process first
// heard of it (ns, this process's clock): from then on its waiting reservations keep the cut's
// pace and hold.
type cutHeard struct{ cut, at int64 }

// cutIsNews reports whether the law's cut made at cut (Redis µs; 0: none) is one this process has
// not heard of. Cuts are told apart by Redis's time, which only grows, even when the state was
// forgotten and its versions start again.
func (l *Limiter) cutIsNews(cut int64) bool {
	h := l.heard.Load()
	return cut > 0 && (h == nil || cut > h.cut)
}

// lockLaw takes the law, waiting for it no longer than ctx allows; it reports whether it did.
func (l *Limiter) lockLaw(ctx context.Context) bool {
	select {
	case l.lawSem <- struct{}{}:
		return true
	default:
	}
	select {
	case l.lawSem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// tryLockLaw takes the law if no other goroutine holds it.
func (l *Limiter) tryLockLaw() bool {
	select {
	case l.lawSem <- struct{}{}:
		return true
	default:
		return false
	}
}

// unlockLaw gives the law back.
func (l *Limiter) unlockLaw() { <-l.lawSem }

// sentForLaw is the send time to hand the law for an attempt that left at sent (zero: not known),
// in Redis's time. A request this process sent before it heard of the law's last cut was booked
// at the pace before it, whenever it left: it belongs to that cut's epoch, as a request in flight
// at the cut does, and goes to the law as sent at the cut. (Another process's cut reaches this one
// with its next reservation; until then its waiting reservations keep the old pace, and the
// throttles they draw would cut a pace that never sent them, once per process: 1.20x at 50/s with
// three processes, where the bisection took them for its test refuted.) The law is held.
func (l *Limiter) sentForLaw(sent time.Time) time.Time {
	if sent.IsZero() || l.lawCV == 0 {
		return l.redisTime(sent)
	}
	if h := l.heard.Load(); h == nil || h.cut < l.lawCV || sent.UnixNano() < h.at {
		if c := l.law.LastCut(); !c.IsZero() {
			return c
		}
	}
	return l.redisTime(sent)
}

// intOf reads an integer field of an HMGET reply (0 when missing or not an integer).
func intOf(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
