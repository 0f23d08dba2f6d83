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
	// moveThreshold is the relative change of the shared rate from which a process moves its
	// waiting reservations.
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
	lastReg   atomic.Int64  // ns on the caller's clock of the last registration
	downUntil atomic.Int64  // ns on the caller's clock until which Redis is not tried
	lastDue   atomic.Int64  // ns on the caller's clock: the latest due time of a booked request
	local     atomic.Bool   // the last reservation came from the fallback
	// offset is Redis's clock less the caller's (ns), as measured on the last reservation: the
	// law's times are Redis's (docs/shared-learner.md).
	offset atomic.Int64

	// lawSem, a semaphore of one, guards law, lawV, lawCV, lawRate, alone, lawAt and seed; it is taken within a
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
	// lawAt is when the law last learned, or was read or written (ns, the caller's clock): a law
	// older than WithForget does not seed a forgotten state.
	lawAt int64
	// seed is the law's count of successes less Redis's count when the law was kept to seed a
	// forgotten state (readLaw), until the seed is written; 0 otherwise.
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
// than 1%, and on every throttled response. When the shared pace changes, the slots booked beyond
// now are re-spaced at the new pace in Redis, and each process moves its own waiting reservations
// likewise when it next hears the pace (Reservation.Changed fires): a cold start that booked slots
// at the initial rate does not have to sit them out once the server's rate is known.
//
// When Redis fails (an error, or no answer within WithTimeout, 50 ms by default), the limiter
// serves reservations from a local GCRA at its share of the rate (WithFallbackShare) and tries
// Redis again after WithRecheck (1 s). A learning limiter meanwhile learns alone: its successes
// and throttles go to the law it holds, whose rate (capped by the declared one) the fallback
// paces at, so a process that cannot reach Redis at all learns the server as one learner would;
// when Redis answers again the shared state replaces it. Reserve never blocks longer than the timeout (the law's
// advance shares the reservation's deadline, and one that runs out of it is left to the next
// reservation) and never fails because of Redis. A reservation is due at the caller's time plus
// the time the call took plus the delay Redis computed from its own clock, so the processes'
// clocks need not agree and a request is never early.
//
// Cancel gives a reservation's slot back only while no later reservation of any process was
// booked on the key and the schedule was not re-spaced since (it is the last one); otherwise the
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
	if err == nil && len(res) != 10 {
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
	if l.downUntil.Load() != 0 && l.downUntil.Swap(0) != 0 {
		l.logUp()
	}
	if recovering {
		l.local.Store(false)
	}
	if res[4] > 0 {
		l.live.Store(res[4])
	}
	var gen *paceGen
	if !l.cfg.known {
		// Redis read its clock during the call: its time less the call's end errs by at most the
		// call's round trip, inside the jitter margin the law allows a send time.
		l.offset.Store(res[7]*int64(time.Microsecond) - now.Add(took).UnixNano())
		gen = l.learnRate(paceReply{
			redisNow: res[7], rate: float64(res[3]) / 1e6,
			at:  now.Add(-time.Duration(res[8]) * time.Microsecond),
			cut: res[9], cutAt: now.Add(-time.Duration(res[7]-res[9]) * time.Microsecond),
			heardAt: now.Add(took),
		})
		// The slot was booked at gen's pace; a pace the advance writes moves it like the others.
		l.advance(ctx, now.Add(took), took, res[5], res[6])
	}
	due := now.Add(took + time.Duration(res[0])*time.Microsecond)
	l.noteDue(due.UnixNano())
	if res[0] <= 0 {
		return dueReservation{}, nil
	}
	return &reservation{l: l, due: due, booked: res[1], interval: res[2], gen: gen}, nil
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

// paceGen is one generation of a learning limiter's shared rate, as this process heard it. A new
// generation starts when the rate changes by more than moveThreshold; reservations booked in an
// older one move (see reservation.Delay).
type paceGen struct {
	rate float64   // the shared rate
	at   time.Time // when Redis took it (or cut the law), on this process's clock
	seen int64     // Redis's time of the reply it came from (µs): an older reply is stale
	// hold is one spacing at rate when the generation is the first this process heard after a cut
	// of the law (else 0): the slots beyond at move that much later, as in Redis.
	hold    time.Duration
	next    atomic.Pointer[paceGen] // the generation after this one, nil while current
	changed chan struct{}           // closed when next is set
}

// paceReply is what one reply from Redis says of the shared pace, on this process's clock.
type paceReply struct {
	redisNow int64     // Redis's time of the reply (µs): orders replies
	rate     float64   // the pace slots are booked at
	at       time.Time // when Redis took that pace
	cut      int64     // when the law last cut (Redis µs; 0: never)
	cutAt    time.Time // the same, on this process's clock
	heardAt  time.Time // when this process heard the reply
}

// learnRate records the shared pace a reply from Redis carried and returns the current
// generation. A new generation starts when the pace moved by more than moveThreshold, or when the
// reply is the first this process heard of a cut of the law: that generation holds the waiting
// reservations one spacing, as the cut held the slots in Redis, even when the pace itself did not
// move (a declared cap below the law's rate). A reply older than the current generation's is stale
// and changes nothing.
func (l *Limiter) learnRate(p paceReply) *paceGen {
	cur := l.pace.Load()
	if p.redisNow < cur.seen {
		return cur
	}
	if !l.cutIsNews(p.cut) && math.Abs(p.rate-cur.rate) <= moveThreshold*cur.rate {
		l.rate.Store(math.Float64bits(p.rate))
		return cur
	}
	l.paceMu.Lock()
	defer l.paceMu.Unlock()
	cur = l.pace.Load()
	if p.redisNow < cur.seen {
		return cur
	}
	l.rate.Store(math.Float64bits(p.rate))
	news := l.cutIsNews(p.cut)
	if !news && math.Abs(p.rate-cur.rate) <= moveThreshold*cur.rate {
		return cur
	}
	g := &paceGen{rate: p.rate, at: p.at, seen: p.redisNow, changed: make(chan struct{})}
	if news {
		l.heard.Store(&cutHeard{cut: p.cut, at: p.heardAt.UnixNano()})
		g.hold = time.Duration(math.Ceil(1e9 / p.rate))
		if p.cutAt.After(g.at) {
			g.at = p.cutAt
		}
	}
	cur.next.Store(g)
	l.pace.Store(g)
	close(cur.changed)
	return g
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
// limiter's reservation moves with the shared rate.
type reservation struct {
	l        *Limiter
	due      time.Time // as booked
	booked   int64     // the booked slot t (µs, Redis time)
	interval int64     // its interval (µs)
	gen      *paceGen  // the pace generation it was booked in (nil: known rate)
	once     sync.Once
}

// Delay reports how long after now the request must wait. A learning limiter's reservation that
// is still waiting when the shared rate changes moves as the schedule in Redis was re-spaced: from
// the moment Redis took the new rate, the rest of its wait is scaled by old rate / new rate, and
// after a cut it is one new spacing longer (the law's hold).
func (r *reservation) Delay(now time.Time) time.Duration {
	due := r.due
	if r.gen != nil {
		rate := 1e6 / float64(r.interval)
		for g := r.gen.next.Load(); g != nil; g = g.next.Load() {
			if due.After(g.at) {
				due = g.at.Add(time.Duration(math.Ceil(float64(due.Sub(g.at))*rate/g.rate)) + g.hold)
			}
			rate = g.rate
		}
	}
	return max(due.Sub(now), 0)
}

// Changed returns a channel closed when the shared rate next changes (learning limiters), or nil
// with a known rate.
func (r *reservation) Changed() <-chan struct{} {
	if r.gen == nil {
		return nil
	}
	return r.l.pace.Load().changed
}

// Cancel gives the slot back in Redis if no later one was booked; a no-op once due or when called
// again.
func (r *reservation) Cancel(now time.Time) {
	if r.Delay(now) == 0 {
		return
	}
	r.once.Do(func() { r.l.cancel(now, r.booked, r.interval) })
}

// cancel runs the cancel script.
func (l *Limiter) cancel(now time.Time, booked, interval int64) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	defer cancel()
	n, err := cancelScript.Run(ctx, l.client, l.keys[:1], booked, interval).Int64()
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

var _ throttle.AttemptLearner = (*Limiter)(nil)
