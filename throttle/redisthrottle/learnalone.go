package redisthrottle

import (
	"context"
	"fmt"
	"math"
	"time"
)

// While Redis is unreachable a learning limiter keeps learning, alone: the law it holds (the shared
// state as last read or written) takes this process's successes (each standing for 1/share of the
// key's, see WithFallbackShare) and throttles, and the local
// fallback paces at the law's rate, capped by the rate the server declares, times the process's
// share (WithFallbackShare). That is the single learner's law on one process's evidence, so a
// process that never reached Redis learns the server as a lone learner would, instead of keeping
// its initial rate. When Redis answers again, the next advance reads the shared state, which
// replaces what was learned alone (the other processes went on without it), or, when Redis lost
// the state, is seeded by it (readLaw).

// admitAlone applies a success seen at now while Redis is unreachable to the law this process
// holds. It never waits for the law: while another goroutine holds it, the success is applied by
// the next one.
func (l *Limiter) admitAlone(now time.Time) {
	l.aloneOK.Add(1)
	if !l.tryLockLaw() {
		return
	}
	defer l.unlockLaw()
	l.learnAlone(now)
}

// throttledAlone applies a throttled attempt, sent at sent and answered at now, to the law this
// process holds while Redis is unreachable (the successes before it first), within the limiter's
// timeout like a shared throttle.
func (l *Limiter) throttledAlone(sent, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel()
	if !l.lockLaw(ctx) {
		l.noteError(fmt.Errorf("redisthrottle: the law was busy for %v: %w", l.cfg.timeout, ctx.Err()))
		return
	}
	defer l.unlockLaw()
	l.learnAlone(now)
	if ev := l.law.Throttle(l.sentForLaw(sent), l.redisTime(now)); ev != "" {
		l.stats.cuts.Add(1)
		l.logLaw(ev)
	}
	l.paceAlone()
}

// failAlone records a Redis failure at now while a throttle was being written; the law as this
// process holds it already applied the throttle (ev is what it did, "" nothing), so from now on it
// paces the local fallback alone. The law is held.
func (l *Limiter) failAlone(now time.Time, err error, ev string) {
	l.fail(now.UnixNano(), err)
	if ev != "" {
		l.stats.cuts.Add(1)
		l.logLaw(ev)
	}
	l.alone = true
	l.paceAlone()
}

// learnAlone applies the successes seen while Redis was unreachable to the law. The law is held.
func (l *Limiter) learnAlone(now time.Time) {
	l.capLaw()
	if n := l.aloneOK.Swap(0); n > 0 {
		// The law paces every process together; this one sees its share of the successes. Each
		// stands for 1/share of them, so that the rates the law measures are the whole key's (one
		// process that took its successes for the whole measured its share as the rate, and cut
		// to a fraction of its share).
		l.logLaw(l.law.Admit(l.redisTime(now), n*int64(math.Max(1, math.Round(1/l.share()))))...)
	}
	l.alone = true
	l.paceAlone()
}

// paceAlone sets the rate the local fallback paces at (before the share) to the law's, as Redis
// would book it: capped by the declared rate, or the declared rate itself while the law is in its
// startup (see the scripts' pace). The law is held.
func (l *Limiter) paceAlone() {
	r := l.law.Rate()
	if h := math.Float64frombits(l.advertise.Load()); h > 0 && (!l.law.Active() || r > h) {
		r = h
	}
	l.rate.Store(math.Float64bits(r))
}
