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
)

// Constants of the shared pace.
const (
	// LiveWindow is how long a process counts as using a key after its last registration (every
	// limiter registers itself in Redis about once a second while it reserves). The number of live
	// processes sets the default fallback share (see WithFallbackShare).
	LiveWindow = 10 * time.Second
	// ProbeInterval is how often a learning limiter's shared rate may rise, for all processes
	// together: it doubles per interval in slow start, and then rises by a step that grows with
	// the time since the last cut (see New).
	ProbeInterval = 100 * time.Millisecond
	// Cut is the deepest multiplicative cut of a learning limiter's shared rate on one throttled
	// response (the rate becomes at least Cut times what it was).
	Cut = 0.7
	// probeStep is the first additive step after a cut, as a fraction of the rate the cut set.
	probeStep = 0.003
	// registerEvery is how often a limiter registers itself in the live-process set.
	registerEvery = time.Second
)

// Limiter is a throttle.Limiter whose state lives in Redis, so that every process that creates
// one with the same key (and client options) paces against one shared budget. It also implements
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
	localCut  atomic.Int64  // ns on the caller's clock until which a local cut is not repeated

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
// Without WithRate it learns the shared rate from the server's answers (Observe), storing it in
// Redis beside the GCRA state so that what one process learns paces all of them:
//   - a rate advertised in RateLimit-Policy or X-RateLimit-Limit (with a window) is taken at once,
//     less the headroom (WithHeadroom), and caps the rate from then on;
//   - a throttled response (429, or WithThrottleStatuses) cuts the shared rate, once per epoch
//     (see WithEpochGrace), to the rate of successes all processes saw in the last second less the
//     headroom: what the server admits. A cut lowers the rate by at least 2% and at most to Cut
//     times what it was (by exactly Cut when too few successes were seen to measure);
//   - while requests keep succeeding and the pace is what holds them back, the shared rate rises
//     once per ProbeInterval whichever process reserves: it doubles from the initial rate until
//     the first throttle (slow start), then rises additively, in steps that grow the longer no
//     throttle comes;
//   - a Retry-After on a throttled response pauses the key for every process;
//   - state not used for WithForget (10 minutes) expires, and the next process starts over.
//
// When Redis fails (an error, or no answer within WithTimeout, 50 ms by default), the limiter
// serves reservations from a local GCRA at its share of the rate (WithFallbackShare) and tries
// Redis again after WithRecheck (1 s); Reserve never blocks longer than the timeout and never
// fails because of Redis. Reservations are due at the caller's time plus the delay Redis
// computed, so the processes' clocks need not agree.
//
// Cancel gives a reservation's slot back only while no later reservation of any process was
// booked on the key (it was the last one); otherwise the slot is lost, which errs on the slow
// side. A slot given back is given back in Redis, one call with the same deadline; when that call
// fails the slot is lost too.
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
	if client == nil {
		return config{}, ErrNilClient
	}
	if !contextTimeouts(client) {
		return config{}, ErrContextTimeoutDisabled
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
	}
	mode, interval, rate := 1, int64(0), cfg.initial
	if cfg.known {
		mode, interval, rate = 0, intervalMicros(cfg.rate), cfg.rate
	}
	l.rate.Store(math.Float64bits(rate))
	l.args = []any{
		0, mode, interval, cfg.burst, 0, 0.0,
		cfg.initial, cfg.minRate, cfg.maxRate, ProbeInterval.Microseconds(), probeStep,
		cfg.forget.Milliseconds(), "", LiveWindow.Microseconds(),
	}
	return l, nil
}

// contextTimeouts reports whether client honours context deadlines, as far as can be told.
func contextTimeouts(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return true
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
// recheck period ago, the reservation comes from the local fallback instead. It never returns an
// error.
func (l *Limiter) Reserve(now time.Time) (throttle.Reservation, error) {
	t := now.UnixNano()
	if t < l.downUntil.Load() {
		return l.reserveLocal(now), nil
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
		args[12] = l.id
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.timeout)
	res, err := reserveScript.Run(ctx, l.client, l.keys, args...).Int64Slice()
	cancel()
	if err == nil && len(res) != 5 {
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
	if !l.cfg.known {
		l.rate.Store(math.Float64bits(float64(res[3]) / 1e6))
	}
	if res[4] > 0 {
		l.live.Store(res[4])
	}
	if res[0] <= 0 {
		return dueReservation{}, nil
	}
	return &reservation{l: l, due: now.Add(time.Duration(res[0]) * time.Microsecond), booked: res[1], interval: res[2]}, nil
}

// fail records a failed Redis call at t (ns) and keeps away from Redis for the recheck period.
func (l *Limiter) fail(t int64, err error) {
	l.stats.errors.Add(1)
	l.downUntil.Store(t + int64(l.cfg.recheck))
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
	return l.fallback.reserve(now)
}

// reservation is one request booked in Redis. Its slot never moves.
type reservation struct {
	l        *Limiter
	due      time.Time
	booked   int64 // the booked slot t (µs, Redis time)
	interval int64 // its interval (µs)
	once     sync.Once
}

// Delay reports how long after now the request must wait.
func (r *reservation) Delay(now time.Time) time.Duration { return max(r.due.Sub(now), 0) }

// Changed returns nil: a slot booked in Redis never moves.
func (r *reservation) Changed() <-chan struct{} { return nil }

// Cancel gives the slot back in Redis if no later one was booked; a no-op once due or when called
// again.
func (r *reservation) Cancel(now time.Time) {
	if !now.Before(r.due) {
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
