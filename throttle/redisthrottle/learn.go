package redisthrottle

import (
	"context"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// Observe learns from the outcome of one request the limiter let through (throttle.Learner). The
// Transport calls it for every attempt; it is safe for concurrent use and never reads the body.
//
//   - A transport error (err != nil) teaches nothing.
//   - A learning limiter reads the rate the server advertises (RateLimit-Policy, or
//     X-RateLimit-Limit and a window; see package ratelimitheader), clamped to the rate bounds
//     less the headroom, and hands it to Redis with its next reservation.
//   - Any other status than a throttle status counts as a success: a learning limiter reports
//     the count with its next reservation, which costs no extra call.
//   - A throttle status (429 by default, see WithThrottleStatuses) makes one Redis call, with the
//     limiter's timeout: its Retry-After, when at least WithSharedPause (2 s), pauses the key for
//     every process, and a
//     learning limiter cuts the shared rate unless the request was booked before the last cut
//     (the response is matched with the oldest booking the process has not heard back about).
//     While Redis is unreachable, a learning limiter cuts its local rate instead (by 30%, at
//     most once per 250 ms).
func (l *Limiter) Observe(now time.Time, resp *http.Response, err error) {
	if err != nil || resp == nil {
		return
	}
	if !l.cfg.known {
		info := ratelimitheader.Parse(resp.Header, now)
		if info.Limit > 0 && info.Window > 0 {
			// A sliding window counter admits Limit-1 per window in the steady state, not Limit:
			// pace so that every algorithm keeps up.
			adv := float64(max(info.Limit-1, 1)) / info.Window.Seconds()
			adv = min(max(adv, MinRate), l.cfg.maxRate) * (1 - l.cfg.headroom)
			if finite(adv) && adv > 0 {
				l.advertise.Store(math.Float64bits(adv))
			}
		}
	}
	var sent send
	if !l.cfg.known {
		var ok bool
		if sent, ok = l.sends.pop(now.UnixNano()); !ok {
			sent.epoch = l.epoch.Load()
		}
	}
	if !slices.Contains(l.cfg.statuses, resp.StatusCode) {
		if !l.cfg.known {
			l.successes.Add(1)
		}
		return
	}
	l.stats.throttles.Add(1)
	ra, _ := ratelimitheader.RetryAfter(resp.Header, now)
	if ra < l.cfg.pauseMin || ra <= 0 {
		ra = 0 // this process's Transport pauses it; the others need not hear of it
	}
	if l.cfg.known && ra == 0 {
		return
	}
	t := now.UnixNano()
	if t < l.downUntil.Load() {
		l.cutLocal(t)
		return
	}
	mode := 1
	if l.cfg.known {
		mode = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel()
	res, err := throttledScript.Run(ctx, l.client, l.keys[:1],
		l.scriptNow(now), mode, ra.Microseconds(), l.cfg.minRate,
		sent.epoch, l.cfg.forget.Milliseconds()).Int64Slice()
	if err == nil && len(res) != 4 {
		err = errUnexpectedReply
	}
	if err != nil {
		l.fail(t, err)
		l.cutLocal(t)
		return
	}
	if res[0] == 1 {
		l.stats.cuts.Add(1)
	}
	if res[1] > 0 {
		l.learnRate(now.Add(-time.Duration(res[3])*time.Microsecond), float64(res[1])/1e6)
		l.epoch.Store(res[2])
	}
}

// cutLocal cuts the rate the local fallback paces at (learning limiters only), at most once per
// localCutEvery.
func (l *Limiter) cutLocal(t int64) {
	if l.cfg.known {
		return
	}
	until := l.localCutUntil.Load()
	if t < until || !l.localCutUntil.CompareAndSwap(until, t+int64(localCutEvery)) {
		return
	}
	for {
		old := l.rate.Load()
		r := max(math.Float64frombits(old)*localCut, l.cfg.minRate)
		if l.rate.CompareAndSwap(old, math.Float64bits(r)) {
			l.stats.cuts.Add(1)
			return
		}
	}
}
