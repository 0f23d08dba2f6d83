package redisthrottle

import (
	"context"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// Observe learns from the outcome of one request the limiter let through (throttle.Learner), sent
// one round trip before now as far as the limiter knows (see ObserveAttempt).
func (l *Limiter) Observe(now time.Time, resp *http.Response, err error) {
	l.ObserveAttempt(time.Time{}, now, resp, err)
}

// ObserveAttempt learns from one attempt that left at sent (zero: not known) and was answered at
// now (throttle.AttemptLearner). The Transport calls it for every attempt; it is safe for
// concurrent use and never reads the body.
//
//   - A transport error (err != nil) teaches nothing.
//   - A learning limiter measures its round trip, and reads the rate the server declares
//     (RateLimit-Policy, or X-RateLimit-Limit and a window; see package ratelimitheader), L per W
//     less the headroom, clamped to the rate bounds: it caps the shared pace from the next
//     reservation on. (A sliding window counter sustains only L-1 per W: its throttles at the cap
//     go to the law, which learns the rate below it.)
//   - Any other status than a throttle status counts as a success: a learning limiter reports the
//     count with its next reservation, which costs no extra call; the shared law applies it there.
//   - A throttle status (429 by default, see WithThrottleStatuses): a Retry-After of at least
//     WithSharedPause (2 s) pauses the key for every process (one Redis call), and a learning
//     limiter hands the throttle to the shared rate law (learn.RateLaw), which decides whether it
//     cuts: a request sent before the law's last cut (by any process), or before this process heard
//     of that cut (it was booked at the pace before it), belongs to that cut. That is one
//     compare-and-set of the law in Redis, and one read more per process that wrote it meanwhile
//     (docs/shared-learner.md), all within WithTimeout.
//   - While Redis is unreachable, a learning limiter's successes and throttles teach the law this
//     process holds, alone, and the local fallback paces at its rate (capped by the declared one)
//     times the process's share; when Redis answers again the shared state replaces it (or, if
//     Redis lost the state, is seeded by it).
func (l *Limiter) ObserveAttempt(sent, now time.Time, resp *http.Response, err error) {
	if err != nil || resp == nil {
		return
	}
	if !l.cfg.known {
		l.readDeclared(resp.Header, now)
		// A sample is skipped while the law is busy (a throttle being written): the round trip is
		// smoothed over many, and a success must not wait for a write.
		if l.tryLockLaw() {
			l.law.ObserveRoundTrip(sent, now)
			l.unlockLaw()
		}
	}
	t := now.UnixNano()
	if !slices.Contains(l.cfg.statuses, resp.StatusCode) {
		if !l.cfg.known {
			// Counted for Redis either way: the shared law measures the rate the processes were
			// admitted at, and during an outage they went on being admitted (each at its share).
			l.successes.Add(1)
			if t < l.downUntil.Load() {
				l.admitAlone(now)
			}
		}
		return
	}
	l.stats.throttles.Add(1)
	if ra, _ := ratelimitheader.RetryAfter(resp.Header, now); ra >= l.cfg.pauseMin && ra > 0 && t >= l.downUntil.Load() {
		l.sharePause(now, min(ra, l.cfg.pauseMax))
	}
	if l.cfg.known {
		return
	}
	if t < l.downUntil.Load() {
		l.throttledAlone(sent, now)
		return
	}
	l.throttled(sent, now)
}

// readDeclared keeps the rate the server declares in h, to cap the shared pace with.
func (l *Limiter) readDeclared(h http.Header, now time.Time) {
	info := ratelimitheader.Parse(h, now)
	if info.Limit <= 0 || info.Window <= 0 {
		return
	}
	adv := float64(info.Limit) / info.Window.Seconds()
	adv = min(max(adv, MinRate), l.cfg.maxRate) * (1 - l.cfg.headroom)
	if finite(adv) && adv > 0 {
		l.advertise.Store(math.Float64bits(adv))
	}
}

// Resume ends the key's shared pause (a Retry-After one process shared) for every process, now
// (throttle.Resumer: Throttle.Resume calls it): the requests booked from then on are not held for
// it. Requests another process booked during the pause keep their slots, and the next bookings
// line up behind them (a Throttle's requests sit out its own pause before they book, so those of
// the process that calls Resume hold no such slot). It is one Redis call within
// WithTimeout; while Redis is unreachable there is no shared pause to end, and an error is counted
// as any other (Stats). It is safe for concurrent use.
func (l *Limiter) Resume(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel()
	if err := resumeScript.Run(ctx, l.client, l.keys[:1], l.scriptNow(now)).Err(); err != nil {
		l.fail(now.UnixNano(), err)
	}
}

// sharePause pauses the key for every process until ra after now.
func (l *Limiter) sharePause(now time.Time, ra time.Duration) {
	ttl := int64(0)
	if !l.cfg.known {
		ttl = l.cfg.forget.Milliseconds()
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel()
	if err := pauseScript.Run(ctx, l.client, l.keys[:1], l.scriptNow(now), ra.Microseconds(), ttl).Err(); err != nil {
		l.fail(now.UnixNano(), err)
	}
}
