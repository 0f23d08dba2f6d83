package testserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/steadyhttp/steady/internal/ctxsleep"
)

// Middleware returns next wrapped by a new Limiter enforcing rules (see [Limiter.Middleware]).
// Use [NewLimiter] and [Limiter.Middleware] instead to reach the limiter (Stats, SetRules).
func Middleware(next http.Handler, rules []Rule, opts ...Option) (http.Handler, error) {
	l, err := NewLimiter(rules, opts...)
	if err != nil {
		return nil, err
	}
	return l.Middleware(next), nil
}

// Middleware wraps next: every request is decided (see [Limiter.Decide]); a throttled one is
// answered with the configured status, Retry-After, the RateLimit fields and a problem+json body,
// and never reaches next; an admitted one gets the RateLimit fields, is held until its slot by a
// shaping rule, and is passed to next. A request whose context ends before it is decided gets no
// answer (its client is gone); one whose context ends while it is held, or that the limiter cannot
// decide (a Store error), gets 503 and does not reach next. A held request keeps its slot: a
// leaky-bucket queue cannot give a place back without reordering the requests behind it. The
// waits an answer names (reset, Retry-After, the hold) are measured from the clock read after the
// decision, when the answer is written (before a hold), not from the read it was decided at
// (but see [OwnClockStore]). The handler is safe for concurrent use.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := l.cfg.clock()
		// The decision's rule results live on this stack, which saves an allocation; the hook
		// and the personas, which may keep them, get a copy.
		var buf [4]RuleResult
		res, err := l.decide(r, now, buf[:0])
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return
			}
			writeUnavailable(w, "rate limiter unavailable: "+err.Error())
			return
		}
		if l.cfg.hook != nil {
			l.cfg.hook(now, r, res.clone())
		}
		// The answer names its waits from the moment it is written (see Result.age): one clock
		// read more per request, against a reset a whole second late in whole-second headers. A
		// store deciding at its own clock measured them from then (OwnClockStore).
		sent := l.cfg.clock()
		if !l.ownClock {
			res.age(sent.Sub(now))
		}
		if !res.Allowed {
			l.writeDenied(w, &res, sent)
			return
		}
		l.writeAdmittedHeaders(w.Header(), &res, sent)
		if res.Delay > 0 {
			if err := ctxsleep.Sleep(r.Context(), res.Delay); err != nil {
				// The client is gone or the server is stopping: nobody to serve.
				writeUnavailable(w, "request ended while held for its slot: "+err.Error())
				return
			}
		}
		l.inFlight.Add(1)
		defer l.inFlight.Add(-1)
		next.ServeHTTP(w, r)
	})
}
