package testserver

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Limiter applies a list of rules to requests. Create it with [NewLimiter]; use [Limiter.Decide]
// directly or wrap a handler with [Limiter.Middleware]. Rules can be replaced at any time with
// [Limiter.SetRules]. A Limiter is safe for concurrent use and starts no goroutines.
type Limiter struct {
	cfg      *config
	store    Store
	ownStore bool
	rules    atomic.Pointer[[]*compiledRule]
	inFlight atomic.Int64
	stats    *statsTable
	closed   atomic.Bool
}

// NewLimiter validates rules and returns a Limiter enforcing them. Invalid rules give a
// *[RuleError] (matching [ErrInvalidRule]); invalid options an *[OptionError]; Server-only
// options [ErrServerOption].
func NewLimiter(rules []Rule, opts ...Option) (*Limiter, error) {
	cfg := newConfig(opts)
	if err := cfg.limiterErr(); err != nil {
		return nil, err
	}
	return newLimiter(rules, cfg)
}

func newLimiter(rules []Rule, cfg *config) (*Limiter, error) {
	compiled, err := compileRules(personaDefaults(cfg.persona, rules))
	if err != nil {
		return nil, err
	}
	l := &Limiter{cfg: cfg, store: cfg.store, stats: newStatsTable(cfg.statsKeys)}
	if l.store == nil {
		s, err := NewMemoryStore(cfg.maxKeys)
		if err != nil {
			return nil, err
		}
		l.store, l.ownStore = s, true
	}
	l.install(compiled)
	return l, nil
}

func (l *Limiter) install(compiled []*compiledRule) {
	for _, c := range compiled {
		l.stats.addRule(c.rule.Name)
	}
	l.rules.Store(&compiled)
}

// SetRules validates rules and, if they are valid, replaces the limiter's rules atomically;
// requests in progress finish under the old rules. The per-key state of a rule whose identity
// (name, algorithm, limit, window and burst) is unchanged is kept, so a reload does not hand out
// fresh quotas; changing mode, key, match or tiers of other keys keeps it too. A tier's state is
// kept while the tier's own quota is unchanged. Invalid rules leave the current ones in place.
func (l *Limiter) SetRules(rules []Rule) error {
	compiled, err := compileRules(personaDefaults(l.cfg.persona, rules))
	if err != nil {
		return err
	}
	l.install(compiled)
	return nil
}

// Rules returns a copy of the limiter's current rules, with defaults filled in.
func (l *Limiter) Rules() []Rule {
	cur := *l.rules.Load()
	out := make([]Rule, len(cur))
	for i, c := range cur {
		out[i] = c.rule.normalized()
	}
	return out
}

// InFlight returns the number of requests currently inside handlers wrapped by
// [Limiter.Middleware] (after admission and any shaping hold).
func (l *Limiter) InFlight() int64 { return l.inFlight.Load() }

func (l *Limiter) load() int64 {
	if l.cfg.inFlight != nil {
		return l.cfg.inFlight()
	}
	return l.inFlight.Load()
}

// Decide decides whether r is admitted now (the limiter's clock) under every rule it matches, and
// records it when it is. It uses r's context: a context already done returns its error and
// decides nothing, and a shaping rule denies (consuming nothing) a request whose deadline comes
// before its slot. Errors come only from the context and the Store; Decide never panics on bad
// requests (a request without URL matches only rules without a path prefix).
func (l *Limiter) Decide(r *http.Request) (Result, error) {
	now := l.cfg.clock()
	return l.decide(r, now)
}

func (l *Limiter) decide(r *http.Request, now time.Time) (Result, error) {
	if l.closed.Load() {
		return Result{}, ErrClosed
	}
	ctx := r.Context()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	rules := *l.rules.Load()
	type match struct {
		rule  *compiledRule
		quota *algSet
	}
	var (
		buf     [4]match
		matched = buf[:0]
		checks  []StoreCheck
	)
	var load int64 // in-flight requests, sampled once when an elastic rule asks
	loaded := false
	for _, c := range rules {
		if !c.matches(r) {
			continue
		}
		key, parts := c.key.derive(r, &l.cfg.ips)
		q := c.quota(key, parts)
		check := StoreCheck{Rule: c.rule.Name, Scope: q.scope, Key: key, N: 1, Algorithm: q.enforce, CountDenied: c.rule.CountDenied}
		switch c.rule.Mode {
		case ModeSoft:
			check.Publish = q.base
		case ModeElastic:
			if !loaded {
				load, loaded = l.load(), true
			}
			// Spare capacity: fewer requests in flight than this rule's Capacity.
			if load < c.rule.Capacity {
				check.Algorithm = q.ceiling
				check.Publish = q.base
			}
		case ModeShadow:
			check.Advisory = true
		}
		if c.rule.Shape {
			if dl, ok := ctx.Deadline(); ok {
				left := dl.Sub(now)
				if left <= 0 {
					return Result{}, context.DeadlineExceeded
				}
				check.MaxDelay = left
			}
		}
		if checks == nil {
			checks = make([]StoreCheck, 0, len(rules))
		}
		matched = append(matched, match{c, q})
		checks = append(checks, check)
	}
	if len(checks) == 0 {
		return Result{Allowed: true}, nil
	}
	decisions, err := l.store.Apply(ctx, now, checks)
	if err != nil {
		return Result{}, err
	}
	res := Result{Allowed: true, Rules: make([]RuleResult, len(checks))}
	for i, m := range matched {
		c := m.rule
		d, p := decisions[i].Decision, decisions[i].Published
		rr := RuleResult{
			Rule:      c.rule.Name,
			Key:       checks[i].Key,
			Tier:      m.quota.tier,
			Mode:      c.rule.Mode,
			Allowed:   d.Allowed,
			Committed: decisions[i].Committed,
			Limit:     m.quota.base.Limit(),
			Window:    m.quota.base.Window(),
			Remaining: p.Remaining,
			Reset:     p.ResetAfter,
		}
		if p.Allowed && !rr.Committed {
			// Published figures assume the request is counted; it was not.
			rr.Remaining += checks[i].N
		}
		if d.Allowed {
			rr.Elastic = c.rule.Mode == ModeElastic && !p.Allowed
			if c.rule.Shape {
				rr.Delay = d.Delay
			}
		} else {
			rr.RetryAfter = d.RetryAfter
			if c.rule.Mode == ModeElastic && !p.Allowed {
				rr.RetryAfter = max(rr.RetryAfter, p.RetryAfter)
			}
			if checks[i].Advisory {
				rr.Shadowed = true
				res.Shadowed = true
			} else {
				res.Allowed = false
				res.RetryAfter = max(res.RetryAfter, rr.RetryAfter)
			}
		}
		res.Rules[i] = rr
	}
	if res.Allowed {
		for _, rr := range res.Rules {
			res.Delay = max(res.Delay, rr.Delay)
		}
	}
	l.stats.record(&res)
	return res, nil
}

// Close releases the limiter's own store (not one given with [WithStore]). Decide after Close
// returns [ErrClosed]. Close is idempotent.
func (l *Limiter) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	if l.ownStore {
		return l.store.Close()
	}
	return nil
}
