package testserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// Limiter applies a list of rules to requests. Create it with [NewLimiter]; use [Limiter.Decide]
// directly or wrap a handler with [Limiter.Middleware]. Rules can be replaced at any time with
// [Limiter.SetRules]. A Limiter is safe for concurrent use and starts no goroutines.
type Limiter struct {
	cfg      *config
	store    Store
	mem      *MemoryStore // store, when it is a MemoryStore (called without an interface)
	ownStore bool
	// ownClock is set when the store decides at its own clock (OwnClockStore): the middleware
	// then does not age its decisions' waits.
	ownClock bool
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
	l.mem, _ = l.store.(*MemoryStore)
	if oc, ok := l.store.(OwnClockStore); ok {
		l.ownClock = oc.DecidesOnOwnClock()
	}
	l.install(compiled)
	return l, nil
}

func (l *Limiter) install(compiled []*compiledRule) {
	for _, c := range compiled {
		c.counters = l.stats.addRule(c.rule.Name)
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
	return l.decide(r, now, nil)
}

// decide is Decide at now. The result's Rules take buf's place when it has room (the middleware
// keeps them on its stack); otherwise they are allocated.
func (l *Limiter) decide(r *http.Request, now time.Time, buf []RuleResult) (Result, error) {
	if l.closed.Load() {
		return Result{}, ErrClosed
	}
	ctx := r.Context()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	rules := *l.rules.Load()
	if l.mem != nil {
		if c, ok := onlyMatch(rules, r); ok && c != nil && !c.key.global && c.key.fn == nil {
			return l.decideOne(ctx, r, now, c, buf)
		}
	}
	// A request matches a few rules: their bookkeeping stays on the stack.
	var (
		quotaBuf [4]*algSet
		ruleBuf  [4]*compiledRule
		checkBuf [4]StoreCheck
		decBuf   [4]StoreDecision
		quotas   = quotaBuf[:0]
		matched  = ruleBuf[:0]
		checks   = checkBuf[:0]
		load     = inFlightOnce{l: l}
	)
	for _, c := range rules {
		if !c.matches(r) {
			continue
		}
		key, parts := c.key.derive(r, &l.cfg.ips, len(c.tiers) > 0)
		q := c.quota(key, parts)
		checks = append(checks, StoreCheck{})
		if err := c.check(&checks[len(checks)-1], ctx, now, q, key, c.cost(r), &load); err != nil {
			return Result{}, err
		}
		matched = append(matched, c)
		quotas = append(quotas, q)
	}
	if len(checks) == 0 {
		return Result{Allowed: true}, nil
	}
	decisions, err := l.apply(ctx, now, checks, decBuf[:0])
	if err != nil {
		return Result{}, err
	}
	res := Result{Allowed: true, Rules: ruleResults(buf, len(checks))}
	for i, c := range matched {
		rr := &res.Rules[i]
		c.result(quotas[i], &checks[i], &decisions[i], rr)
		if !rr.Allowed {
			if rr.Shadowed {
				res.Shadowed = true
			} else {
				res.Allowed = false
				res.RetryAfter = max(res.RetryAfter, rr.RetryAfter)
			}
		}
	}
	if res.Allowed {
		for _, rr := range res.Rules {
			res.Delay = max(res.Delay, rr.Delay)
		}
	}
	for i, c := range matched {
		l.stats.record(c.counters, stripeHash(res.Rules[i].Key), res.Allowed, &res.Rules[i])
	}
	return res, nil
}

// ruleResults returns n zero RuleResults: buf's first n when it has room, else new ones.
func ruleResults(buf []RuleResult, n int) []RuleResult {
	if cap(buf) < n {
		return make([]RuleResult, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// onlyMatch returns the one rule r matches; ok is false when r matches more than one.
func onlyMatch(rules []*compiledRule, r *http.Request) (only *compiledRule, ok bool) {
	for _, c := range rules {
		if c.matches(r) {
			if only != nil {
				return nil, false
			}
			only = c
		}
	}
	return only, true
}

// decideOne is decide for a request that matches rule c alone, on the memory store: the key is
// built on the stack and the store hands back its own copy, so that a known key costs no
// allocation.
func (l *Limiter) decideOne(ctx context.Context, r *http.Request, now time.Time, c *compiledRule, buf []RuleResult) (Result, error) {
	var (
		keyBuf [128]byte
		endBuf [4]int
	)
	key, ends := c.key.appendKey(keyBuf[:0], endBuf[:0], r, &l.cfg.ips)
	q := c.quotaOfParts(key, ends)
	load := inFlightOnce{l: l}
	var check StoreCheck
	if err := c.check(&check, ctx, now, q, "", c.cost(r), &load); err != nil {
		return Result{}, err
	}
	var sd StoreDecision
	h, err := applyKey(l.mem, now, q.memScope(l.mem, &check), &check, key, &sd)
	if err != nil {
		return Result{}, err
	}
	res := Result{Allowed: true, Rules: ruleResults(buf, 1)}
	rr := &res.Rules[0]
	c.result(q, &check, &sd, rr)
	if !rr.Allowed {
		if rr.Shadowed {
			res.Shadowed = true
		} else {
			res.Allowed = false
			res.RetryAfter = rr.RetryAfter
		}
	} else {
		res.Delay = rr.Delay
	}
	l.stats.record(c.counters, h, res.Allowed, rr)
	return res, nil
}

// DecideKey decides one request for key under the rule named rule alone, now (the limiter's
// clock), and records it when it is admitted: it is [Limiter.Decide] for callers that derive
// their own keys (what key-value rate limiters such as sethvargo/go-limiter offer). The rule's
// mode, tiers (looked up by the whole key, then by each "+"-separated part) and shaping apply as
// in Decide; its match conditions and key spec do not. Unlike Decide, a denial by a shadow-mode
// rule reads Allowed false and Shadowed true: the caller decides what to do with it. Errors come
// from the context (one already done decides nothing), from the Store, and from an unknown rule
// name ([ErrUnknownRule]). With the memory store it allocates nothing. It is safe for
// concurrent use.
//
// (The result is named so that it is filled where the caller receives it: a RuleResult built in
// a local and returned would be copied right after it was written, which stalls; see
// algorithm.Take.)
func (l *Limiter) DecideKey(ctx context.Context, rule, key string) (rr RuleResult, err error) {
	if l.closed.Load() {
		return RuleResult{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return RuleResult{}, err
	}
	var c *compiledRule
	for _, x := range *l.rules.Load() {
		if x.rule.Name == rule {
			c = x
			break
		}
	}
	if c == nil {
		return RuleResult{}, fmt.Errorf("%w: %q", ErrUnknownRule, rule)
	}
	now := l.cfg.clock()
	q := c.quotaOfKey(key)
	load := inFlightOnce{l: l}
	var check StoreCheck
	if err := c.check(&check, ctx, now, q, key, 1, &load); err != nil {
		return RuleResult{}, err
	}
	var (
		sd StoreDecision
		h  uint64
	)
	if l.mem != nil {
		h, err = applyKey(l.mem, now, q.memScope(l.mem, &check), &check, key, &sd)
	} else {
		var ds []StoreDecision
		if ds, err = l.store.Apply(ctx, now, []StoreCheck{check}); err == nil {
			sd = ds[0]
		}
		h = stripeHash(key)
	}
	if err != nil {
		return RuleResult{}, err
	}
	c.result(q, &check, &sd, &rr)
	l.stats.record(c.counters, h, rr.Allowed || rr.Shadowed, &rr)
	return rr, nil
}

// apply decides checks in the store, appending to dst. The memory store is called directly, so
// checks and dst may live on the caller's stack; another Store gets a copy of checks.
func (l *Limiter) apply(ctx context.Context, now time.Time, checks []StoreCheck, dst []StoreDecision) ([]StoreDecision, error) {
	if l.mem != nil {
		return l.mem.AppendApply(ctx, dst, now, checks)
	}
	return l.store.Apply(ctx, now, slices.Clone(checks))
}

// inFlightOnce samples the limiter's in-flight count once per decision, when an elastic rule asks.
type inFlightOnce struct {
	l      *Limiter
	n      int64
	loaded bool
}

func (o *inFlightOnce) get() int64 {
	if !o.loaded {
		o.n, o.loaded = o.l.load(), true
	}
	return o.n
}

// check fills check, a zero StoreCheck, with the store check of one request of cost n for key under
// quota q of rule c. It sets the fields one by one: building the check as a value and copying it
// (returning it, or assigning a composite literal through a pointer) went through a temporary whose
// copy cost a tenth of a decision.
func (c *compiledRule) check(check *StoreCheck, ctx context.Context, now time.Time, q *algSet, key string, n int64, load *inFlightOnce) error {
	check.Rule = c.rule.Name
	check.Scope = q.scope
	check.Key = key
	check.N = n
	check.Algorithm = q.enforce
	check.CountDenied = c.rule.CountDenied
	switch c.rule.Mode {
	case ModeSoft:
		check.Publish = q.base
	case ModeElastic:
		// Spare capacity: fewer requests in flight than this rule's Capacity.
		if load.get() < c.rule.Capacity {
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
				return context.DeadlineExceeded
			}
			check.MaxDelay = left
		}
	}
	return nil
}

// result converts the store's decision on check (of quota q of rule c) into the rule's result rr,
// which must be zero (its fields are set one by one, as check's are).
func (c *compiledRule) result(q *algSet, check *StoreCheck, sd *StoreDecision, rr *RuleResult) {
	d, p := &sd.Decision, &sd.Published
	rr.Rule = c.rule.Name
	rr.Key = check.Key
	rr.Tier = q.tier
	rr.Mode = c.rule.Mode
	rr.Allowed = d.Allowed
	rr.Committed = sd.Committed
	rr.Limit = q.limit
	rr.Window = q.window
	rr.Remaining = p.Remaining
	rr.Reset = p.ResetAfter
	if p.Allowed && !rr.Committed {
		// Published figures assume the request is counted; it was not.
		rr.Remaining += check.N
	}
	if d.Allowed {
		rr.Elastic = c.rule.Mode == ModeElastic && !p.Allowed
		if c.rule.Shape {
			rr.Delay = d.Delay
		}
		return
	}
	rr.RetryAfter = d.RetryAfter
	if c.rule.Mode == ModeElastic && !p.Allowed {
		rr.RetryAfter = max(rr.RetryAfter, p.RetryAfter)
	}
	rr.Shadowed = check.Advisory
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
