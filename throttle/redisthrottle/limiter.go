package redisthrottle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/throttle"
	"github.com/steadyhttp/steady/throttle/learn"
)

// Constants of the shared pace.
const (
	// LiveWindow is how long a process counts as using a key after its last registration (every
	// limiter registers itself in Redis about once a second while it reserves). The number of live
	// processes sets the default fallback share (see WithFallbackShare).
	LiveWindow = 10 * time.Second
	// moveThreshold is the relative change of the law's pace from which an advance writes the law
	// back without an event (a smaller one waits for the next): each write restarts the slot
	// clock and wakes every waiting reservation of every process that hears of it.
	moveThreshold = 0.01
	// registerEvery is how often a limiter registers itself in the live-process set.
	registerEvery = time.Second
)

// Limiter is a throttle.Limiter whose state lives in Redis, so that every process that creates
// one with the same key on the same Redis paces against one shared budget. It also implements
// throttle.Learner. It is safe for concurrent use, starts no goroutines and holds nothing that
// needs closing (the Redis client is the caller's). Create it with New.
type Limiter struct {
	client redis.UniversalClient
	keys   []string // state hash, live-process set
	cfg    config
	id     string // this limiter's name in the live-process set
	args   []any  // reserve arguments that never change, copied per call

	// nowMicros, when set (by tests), gives the time the scripts use instead of Redis TIME.
	nowMicros func(time.Time) int64

	successes atomic.Int64  // successes not yet reported to Redis
	advertise atomic.Uint64 // float64 bits: the server's advertised rate after headroom, 0 none
	rate      atomic.Uint64 // float64 bits: the last shared rate (or the local one while down)
	live      atomic.Int64  // live processes last counted in Redis (0: never counted)
	peak      atomic.Int64  // the most live processes counted at once
	lastReg   atomic.Int64  // ns on the caller's clock of the last registration
	downUntil atomic.Int64  // ns on the caller's clock until which Redis is not tried
	lastDue   atomic.Int64  // ns on the caller's clock: the latest due time of a booked request
	local     atomic.Bool   // the last reservation came from the fallback
	// offset is Redis's clock less the caller's (ns), as measured on the last reservation: the
	// law's times are Redis's (docs/shared-learner.md).
	offset atomic.Int64

	// lawSem, a semaphore of one, guards law, lawV, lawCV, lawRate, alone, shared, sharedAt and seed; it is taken within a
	// deadline (lockLaw) and never held across a call that waits for a request.
	lawSem chan struct{}
	law    *learn.RateLaw // the shared rate law as last read or written (learning limiters), advanced by what this process saw since
	lawV   int64          // the version of the state law was read or written at
	lawCV  int64          // when the law last cut (Redis µs), as of lawV (0: never)
	// lawRate is the pace of the law as last read or written: an advance that moves it by more
	// than moveThreshold is written back.
	lawRate float64
	// alone reports that the law learned from this process's evidence alone while Redis was
	// unreachable (learnalone.go): the next advance reads the shared state again.
	alone bool
	// shared is the law as this process last read it from Redis or wrote it there (encoded), and
	// sharedAt when (ns, the caller's clock): it seeds a state Redis forgot, unless older than
	// WithForget. Not the law learned alone: that one saw one process's share of the traffic.
	shared   []byte
	sharedAt int64
	// seed is the law's count of successes when it was restored to seed a forgotten state
	// (readLaw), until the seed is written: Redis's count of the new state is all to apply; 0
	// otherwise.
	seed int64
	// aloneOK counts successes seen while Redis was unreachable, not yet applied to the law.
	aloneOK atomic.Int64

	paceMu sync.Mutex              // serialises new pace generations
	pace   atomic.Pointer[paceGen] // the current pace generation (learning limiters)
	// heard is the latest cut this process has heard of from a reservation or its own write, and
	// when: its reservations booked before then were booked at the pace before the cut. Written
	// under paceMu, with the pace generation that applies the cut's hold.
	heard atomic.Pointer[cutHeard]

	fallback local

	stats   counters
	errMu   sync.Mutex
	lastErr error
}

// New returns a Limiter that paces the requests of every process using key on the Redis behind
// client. The key must not be empty; the limiter's state lives in the Redis keys "{key}" (a hash)
// and "{key}:procs" (a sorted set of live processes), which share a Cluster hash tag.
//
// With WithRate it paces at a known rate, shared: every reservation is one Lua script that reads
// Redis TIME and books the next GCRA slot for the key, so N processes together never book more
// than the rate (plus the burst) and, while they have work, use all of it.
//
// Without WithRate it learns the shared rate from the server's answers (ObserveAttempt) with the
// learner's own headerless law, learn.RateLaw (docs/learner.md §3), run in Go on state kept in
// Redis beside the GCRA schedule, so that what one process learns paces all of them
// (docs/shared-learner.md):
//   - until the first throttle the pace is the startup's: one more request in flight than the
//     successes all processes reported, per round trip, from WithInitialRate;
//   - a throttled response (429, or WithThrottleStatuses) to a request sent after the law's last
//     cut (whichever process sent either) cuts: the first one searches from the run the server
//     admitted, taken as per second; later ones cut below the rate the server admitted, and the law
//     recovers, cruises and probes above its estimate as learn.Learner's rate strategy does;
//   - a rate declared in RateLimit-Policy or X-RateLimit-Limit with a window (L per W, less the
//     headroom, WithHeadroom) caps the shared pace, and replaces the startup's; throttles at the
//     cap (a sliding window counter sustains only L-1 per W) go to the law;
//   - a Retry-After of at least WithSharedPause (2 s) on a throttled response pauses the key for
//     every process, with a known rate too;
//   - state not used for WithForget (10 minutes) expires, and the next process starts over; state
//     Redis lost while processes were using it (a restart without persistence) is written again
//     by the first process to notice, from the law it holds.
//
// The law's spans are counts of successes, whichever process saw them, so N processes move it no
// faster than one process sending as much. Each process reports its successes with its next
// reservation and applies them to the law there; it writes the law back (one more call, a
// compare-and-set on the law's version) only when that makes an event or moves the pace by more
// than 1%, and on every throttled response. Slots are booked on a slot clock that runs at the shared
// pace (docs/shared-learner.md): when the pace changes, every slot booked beyond now moves with it,
// in Redis and in each process, which places its waiting reservations by the last clock it heard
// (Reservation.Changed fires), whatever changes it missed; a cold start that booked slots at the
// initial rate does not have to sit them out once the server's rate is known. A slot whose moment
// passed while its process did not know of a faster pace is booked again (Stats.Lost).
//
// When Redis fails (an error, or no answer within WithTimeout, 50 ms by default), the limiter
// serves reservations from a local GCRA at its share of the rate (WithFallbackShare) and tries
// Redis again after WithRecheck (1 s). A learning limiter meanwhile learns alone: its successes
// and throttles go to the law it holds, whose rate (capped by the declared one) the fallback
// paces at, so a process that cannot reach Redis at all learns the server as one learner would;
// when Redis answers again the shared state replaces it. Reserve never blocks longer than the
// timeout (the law's advance shares the reservation's deadline, and one that runs out of it is
// left to the next reservation) and never fails because of Redis. A reservation is due at the caller's time plus
// the time the call took plus the delay Redis computed from its own clock, so the processes'
// clocks need not agree and a request is never early.
//
// Cancel gives a reservation's slot back only while no later reservation of any process was
// booked on the key (it is the last one); otherwise the
// slot is lost, which errs on the slow side. Giving back is one more Redis call with the same
// deadline; when it fails the slot is lost too.
//
// The client must respect context deadlines: a *redis.Client, *redis.ClusterClient or *redis.Ring
// created without ContextTimeoutEnabled makes New fail with ErrContextTimeoutDisabled (see
// ClientOptions). New also fails with ErrNilClient, ErrInvalidKey, or an error matching
// ErrInvalidOption. It makes no Redis call.
func New(client redis.UniversalClient, key string, opts ...Option) (*Limiter, error) {
	cfg, err := newConfig(client, opts)
	if err != nil {
		return nil, err
	}
	return newLimiter(client, key, cfg)
}

// newConfig checks the client and applies the options.
func newConfig(client redis.UniversalClient, opts []Option) (config, error) {
	if err := checkClient(client); err != nil {
		return config{}, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return config{}, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := o.apply(&cfg); err != nil {
			return config{}, err
		}
	}
	if !cfg.known && (cfg.initial < cfg.minRate || cfg.initial > cfg.maxRate) {
		return config{}, fmt.Errorf("%w: initial rate %v outside the bounds [%v, %v]", ErrInvalidOption, cfg.initial, cfg.minRate, cfg.maxRate)
	}
	return cfg, nil
}

// newLimiter builds a Limiter for key from a checked configuration.
func newLimiter(client redis.UniversalClient, key string, cfg config) (*Limiter, error) {
	if key == "" {
		return nil, ErrInvalidKey
	}
	var id [8]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	tag := "{" + key + "}"
	l := &Limiter{
		client: client,
		keys:   []string{tag, tag + ":procs"},
		cfg:    cfg,
		id:     hex.EncodeToString(id[:]),
		lawSem: make(chan struct{}, 1),
	}
	mode, interval, rate := 1, int64(0), cfg.initial
	if cfg.known {
		mode, interval, rate = 0, intervalMicros(cfg.rate), cfg.rate
	}
	l.rate.Store(math.Float64bits(rate))
	l.pace.Store(&paceGen{rate: rate, changed: make(chan struct{})})
	l.args = []any{
		0, mode, interval, cfg.burst, 0, 0.0, cfg.initial,
		cfg.forget.Milliseconds(), "", LiveWindow.Microseconds(), 0,
	}
	if !cfg.known {
		law, err := newLaw(cfg)
		if err != nil {
			return nil, err
		}
		l.law, l.lawRate = law, law.Rate()
	}
	return l, nil
}

// checkClient refuses a nil client (typed or not) and one that, as far as can be told, ignores
// context deadlines.
func checkClient(client redis.UniversalClient) error {
	timeouts := true
	switch c := client.(type) {
	case nil:
		return ErrNilClient
	case *redis.Client:
		if c == nil {
			return ErrNilClient
		}
		timeouts = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		if c == nil {
			return ErrNilClient
		}
		timeouts = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		if c == nil {
			return ErrNilClient
		}
		timeouts = c.Options().ContextTimeoutEnabled
	}
	if !timeouts {
		return ErrContextTimeoutDisabled
	}
	return nil
}

// Key is the Redis key of the limiter's state hash ("{key}").
func (l *Limiter) Key() string { return l.keys[0] }

// Rate reports the pace in requests per second: the known rate (WithRate), or the shared rate as last read
// from Redis (the initial rate before the first reservation), or, while Redis is unreachable, the
// local rate the fallback paces at before its share is taken.
func (l *Limiter) Rate() float64 { return math.Float64frombits(l.rate.Load()) }

// now returns the explicit time for a script, or 0 for Redis TIME.
func (l *Limiter) scriptNow(now time.Time) int64 {
	if l.nowMicros != nil {
		return l.nowMicros(now)
	}
	return 0
}

// Reserve books one request at now for the key, shared with every process using it. It makes one
// Redis call (EVALSHA) with the limiter's timeout; when Redis fails, or failed less than the
// recheck period ago, the reservation comes from the local fallback instead (after the recheck
// period one reservation tries Redis again while the others keep to the fallback). It never
// returns an error.
func (l *Limiter) Reserve(now time.Time) (throttle.Reservation, error) {
	t := now.UnixNano()
	if du := l.downUntil.Load(); du != 0 {
		// Redis failed lately: after the recheck period one caller tries it again, the others
		// keep to the fallback meanwhile.
		if t < du || !l.downUntil.CompareAndSwap(du, t+int64(l.cfg.timeout)) {
			return l.reserveLocal(now), nil
		}
	}
	args := make([]any, len(l.args))
	copy(args, l.args)
	args[0] = l.scriptNow(now)
	ok := l.successes.Swap(0)
	args[4] = ok
	args[5] = math.Float64frombits(l.advertise.Load())
	reg := t-l.lastReg.Load() >= int64(registerEvery)
	if reg {
		l.lastReg.Store(t)
		args[8] = l.id
	}
	recovering := l.local.Load()
	if recovering {
		// the first reservation since the fallback served this process: not before the last
		// request the fallback booked, plus an interval at the shared rate
		args[10] = max(l.lastDue.Load()-t+int64(1e9/l.Rate()), 0) / int64(time.Microsecond)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel() // the advance of a learning limiter shares the deadline
	res, err := reserveScript.Run(ctx, l.client, l.keys, args...).Int64Slice()
	// Redis took the time somewhere during the call: counting the delay from the call's end
	// rather than from now means the request is never early (explicit-time tests excepted).
	took := time.Since(start)
	if l.nowMicros != nil {
		took = 0
	}
	if err == nil && len(res) != 12 {
		err = errUnexpectedReply
	}
	if err != nil {
		l.successes.Add(ok)
		if reg {
			l.lastReg.Store(0)
		}
		l.fail(t, err)
		return l.reserveLocal(now), nil
	}
	l.stats.redis.Add(1)
	up := l.downUntil.Load() != 0 && l.downUntil.Swap(0) != 0
	if up {
		defer l.logUp() // with the shared pace this reply carries
	}
	l.aloneOK.Store(0) // successes the law alone did not take yet: Redis counts them (learn.go)
	if recovering {
		l.local.Store(false)
	}
	if res[4] > 0 {
		l.live.Store(res[4])
		for p := l.peak.Load(); res[4] > p && !l.peak.CompareAndSwap(p, res[4]); p = l.peak.Load() {
		}
	}
	end := now.Add(took)
	r := &reservation{l: l, due: end.Add(time.Duration(res[0]) * time.Microsecond), booked: res[1], slot: res[2]}
	r.told = r.due
	if !l.cfg.known {
		// Redis read its clock during the call: its time less the call's end errs by at most the
		// call's round trip, inside the jitter margin the law allows a send time.
		l.offset.Store(res[7]*int64(time.Microsecond) - end.UnixNano())
		l.learnRate(paceReply{
			redisNow: res[7], rate: float64(res[3]) / 1e6,
			g: res[7] - res[8], at: end.Add(-time.Duration(res[8]) * time.Microsecond), vg: res[10], vs: res[11],
			cut: res[9], heardAt: end,
		})
		// The slot is on the slot clock: a pace the advance writes moves it like the others.
		r.slot, r.vs = slotMicros, res[11]
		l.advance(ctx, end, took, res[5], res[6])
	}
	l.noteDue(r.due.UnixNano())
	if res[0] <= 0 {
		return dueReservation{}, nil
	}
	return r, nil
}

// noteDue records the due time (ns) of a booked request, if it is the latest.
func (l *Limiter) noteDue(d int64) {
	for {
		old := l.lastDue.Load()
		if d <= old || l.lastDue.CompareAndSwap(old, d) {
			return
		}
	}
}

// slotMicros is one slot on the slot clock, in µ-slots.
const slotMicros = 1_000_000

// paceGen is the slot clock of a learning limiter's shared schedule, as this process last heard it
// (scripts.go): the clock read vg µ-slots at g and runs at rate, so a slot booked at n µ-slots is
// due at at + (n - burst - vg)/rate. Every process places its waiting slots where Redis does, from
// the last clock it heard, whatever changes it missed in between.
type paceGen struct {
	rate float64   // the shared rate: µ-slots a µs, slots a second
	g    int64     // when the clock last restarted (Redis µs)
	at   time.Time // the same, on this process's clock
	vg   int64     // the clock then (µ-slots)
	vs   int64     // the state the clock belongs to (when it began, Redis µs; 0: none heard)
	seen int64     // Redis's time of the reply it came from (µs): an older reply is stale
	// heard is when this process heard of the clock (see reservation.Delay).
	heard time.Time
	// vcut, when the clock restarted at a cut of the law, is the position it had reached then
	// (vg plus the one slot the hold moved it back): a slot before it was due before the cut.
	vcut int64
	// changed is closed when a later clock is heard.
	changed chan struct{}
}

// due is when the slot booked at booked µ-slots (with a burst of one) is due by this clock.
func (g *paceGen) due(booked int64) time.Time {
	return g.at.Add(time.Duration(math.Ceil(float64(booked-slotMicros-g.vg) / g.rate * 1e3)))
}

// paceReply is what one reply from Redis says of the shared pace, on this process's clock.
type paceReply struct {
	redisNow int64     // Redis's time of the reply (µs): orders replies
	rate     float64   // the pace slots are booked at
	g        int64     // when the slot clock last restarted (Redis µs)
	at       time.Time // the same, on this process's clock
	vg, vs   int64     // the slot clock then, and its state
	cut      int64     // when the law last cut (Redis µs; 0: never)
	heardAt  time.Time // when this process heard the reply
}

// learnRate records the slot clock a reply from Redis carried. Waiting reservations follow the
// newest clock, and are told (Reservation.Changed) of every new one, and of the first reply that
// says the law cut (the cut held the slots one spacing). A reply older than the clock held is
// stale and changes nothing.
func (l *Limiter) learnRate(p paceReply) {
	same := func(cur *paceGen) bool {
		return p.g == cur.g && p.vg == cur.vg && p.vs == cur.vs && p.rate == cur.rate
	}
	if cur := l.pace.Load(); p.redisNow < cur.seen || (same(cur) && !l.cutIsNews(p.cut)) {
		if p.redisNow >= cur.seen {
			l.rate.Store(math.Float64bits(p.rate)) // the pace alone may have set it while Redis was down
		}
		return
	}
	l.paceMu.Lock()
	defer l.paceMu.Unlock()
	cur := l.pace.Load()
	news := l.cutIsNews(p.cut)
	if p.redisNow < cur.seen || (same(cur) && !news) {
		return
	}
	l.rate.Store(math.Float64bits(p.rate))
	g := &paceGen{rate: p.rate, g: p.g, at: p.at, vg: p.vg, vs: p.vs, seen: p.redisNow, heard: p.heardAt, vcut: math.MinInt64, changed: cur.changed}
	if p.cut != 0 && p.cut == p.g {
		g.vcut = p.vg + slotMicros
	}
	if news {
		l.heard.Store(&cutHeard{cut: p.cut, at: p.heardAt.UnixNano()})
	}
	// Every waiter is told: even a small change of pace moves a slot far down the line by more
	// than a spacing (1% of a pace moves the hundredth slot by one).
	g.changed = make(chan struct{})
	l.pace.Store(g)
	close(cur.changed)
}

// fail records a failed Redis call at t (ns) and keeps away from Redis for the recheck period.
func (l *Limiter) fail(t int64, err error) {
	l.noteError(err)
	if l.downUntil.Swap(t+int64(l.cfg.recheck)) == 0 {
		l.logDown(err)
	}
}

// noteError counts a failed Redis call and keeps its error for Stats.
func (l *Limiter) noteError(err error) {
	l.stats.errors.Add(1)
	l.errMu.Lock()
	l.lastErr = err
	l.errMu.Unlock()
}

// share is the fraction of the rate this process takes while Redis is unreachable.
func (l *Limiter) share() float64 {
	if l.cfg.share > 0 {
		return l.cfg.share
	}
	if n := l.live.Load(); n > 1 {
		return 1 / float64(n)
	}
	return 1
}

// reserveLocal books one request with the local fallback at the limiter's share of the rate.
func (l *Limiter) reserveLocal(now time.Time) throttle.Reservation {
	l.stats.fallback.Add(1)
	rate := l.Rate() * l.share()
	burst := 1
	if l.cfg.known {
		burst = max(1, int(float64(l.cfg.burst)*l.share()))
	}
	l.fallback.setRate(rate, burst)
	var notBefore int64
	if !l.local.Swap(true) {
		// the first local reservation since Redis served this process: not before the last
		// request Redis booked for it, plus an interval at the local rate
		notBefore = l.lastDue.Load() + int64(1e9/rate)
	}
	r := l.fallback.reserve(now, notBefore)
	l.noteDue(now.Add(r.Delay(now)).UnixNano())
	return r
}

// reservation is one request booked in Redis. With a known rate its slot never moves; a learning
// limiter's slot is on the slot clock and moves with the shared rate.
type reservation struct {
	l      *Limiter
	due    time.Time // as booked
	booked int64     // the booked slot: t (µs, known rate) or vt (µ-slots, learning)
	slot   int64     // one slot in booked's unit
	vs     int64     // learning: the state the slot clock belongs to (0: known rate)
	once   sync.Once
	mu     sync.Mutex // guards due, booked, slot, vs, told and inner (a missed slot is booked again)
	told   time.Time  // learning: the due time Delay last reported
	// inner is the reservation a missed slot was booked again with when that was not one in
	// Redis (due at once, or from the local fallback); nil otherwise.
	inner throttle.Reservation
}

// Delay reports how long after now the request must wait. A learning limiter's reservation is due
// when the slot clock, as this process last heard it, reaches its slot: it moves as the schedule in
// Redis does when the shared rate changes (and one new spacing later after a cut, the law's hold).
// A slot of a state Redis forgot keeps the time it was booked for.
//
// A slot that the clock this process heard last has due before the moment it heard of it, while
// the clock it knew before had it due later, was missed: the pace rose while this process waited
// on the slower schedule it knew, and the slot's moment passed unused. Sent now, it would go
// beside the slot due then, in a pair the schedule never booked (and the missed slots of every
// process at once); so a missed slot is booked again (one more call, within the limiter's
// timeout, counted as lost), behind the requests already in line. So is a slot still waiting that
// was due before the law's last cut, which the clock's hold would place less than a spacing after
// the cut. A waiter that is merely late (its slot was due before the clock changed, by both
// clocks, and no cut came between) sends at once.
func (r *reservation) Delay(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inner != nil {
		return r.inner.Delay(now)
	}
	due := r.dueLocked()
	if r.vs != 0 {
		if g := r.l.pace.Load(); g.vs == r.vs && (due.Before(g.heard) && r.told.After(g.heard) || r.booked-slotMicros < g.vcut) {
			r.l.stats.lost.Add(1)
			r.rebookLocked(now)
			due = r.dueLocked()
		}
		r.told = due
	}
	return max(due.Sub(now), 0)
}

// dueLocked is when the reservation is due; r.mu is held.
func (r *reservation) dueLocked() time.Time {
	if r.vs != 0 {
		if g := r.l.pace.Load(); g.vs == r.vs {
			return g.due(r.booked)
		}
	}
	return r.due
}

// rebookLocked books the reservation's request again at now; r.mu is held.
func (r *reservation) rebookLocked(now time.Time) {
	nr, _ := r.l.Reserve(now) // never fails
	if x, ok := nr.(*reservation); ok {
		r.due, r.booked, r.slot, r.vs = x.due, x.booked, x.slot, x.vs
		return
	}
	r.inner = nr // due at once, or from the local fallback: it answers from now on
}

// Changed returns a channel closed when the shared rate next moves the reservation (learning
// limiters), or nil with a known rate (or once booked again with the local fallback).
func (r *reservation) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inner != nil {
		return r.inner.Changed()
	}
	if r.vs == 0 {
		return nil
	}
	return r.l.pace.Load().changed
}

// Cancel gives the slot back in Redis if no later one was booked; a no-op once due or when called
// again.
func (r *reservation) Cancel(now time.Time) {
	r.mu.Lock()
	inner, due, booked, slot := r.inner, r.dueLocked(), r.booked, r.slot
	r.mu.Unlock()
	if inner != nil {
		inner.Cancel(now) // booked again with the local fallback
		return
	}
	if !due.After(now) {
		return
	}
	r.once.Do(func() { r.l.cancel(now, booked, slot) })
}

// cancel runs the cancel script.
func (l *Limiter) cancel(now time.Time, booked, slot int64) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel()
	field := "vt"
	if l.cfg.known {
		field = "t"
	}
	n, err := cancelScript.Run(ctx, l.client, l.keys[:1], booked, slot, field).Int64()
	switch {
	case err != nil:
		l.fail(now.UnixNano(), err)
		l.stats.lost.Add(1)
	case n == 1:
		l.stats.returned.Add(1)
	default:
		l.stats.lost.Add(1)
	}
}

var (
	_ throttle.AttemptLearner = (*Limiter)(nil)
	_ throttle.Resumer        = (*Limiter)(nil)
)
