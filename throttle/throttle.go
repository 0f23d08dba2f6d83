package throttle

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/steadyhttp/steady/internal/anchoredclock"
	"github.com/steadyhttp/steady/request"
)

// Throttle holds back requests per key: one Limiter per key (from the WithLimiter factory, none by
// default) and a pause per key (Pause, or a Retry-After seen by the Transport). A wait for a key
// first sits out the key's pause, then takes a reservation from the key's limiter. When the key is
// paused while waiting on the limiter, a reservation that would come due before the pause ends is
// given back and the wait starts over after the pause (so a pause never ends in a burst of
// requests that had queued behind it); one that comes due after the pause keeps its place.
//
// Keys are held in a bounded set of partitions (WithMaxKeys), evicting the least recently used idle
// ones. A Throttle is safe for concurrent use, starts no goroutines and needs no Close. Create it
// with New; the zero value is not usable.
type Throttle struct {
	keyFunc func(*http.Request) string
	factory func(key string) (Limiter, error)
	maxKeys int
	onWait  func(req *http.Request, key string, waited time.Duration)
	maxWait time.Duration
	// maxPause bounds a pause set by a server's Retry-After; hasMaxPause is false when unbounded.
	maxPause    time.Duration
	hasMaxPause bool
	epoch       time.Time           // origin of the pause clock
	clock       anchoredclock.Clock // the present, for the request path

	mu    sync.RWMutex // guards parts and lru
	parts map[string]*partition
	lru   lru

	routes routes // the buckets of routes, learned from responses
}

// New returns a Throttle configured by opts. With no options it paces nothing and only pauses keys
// (hosts) that are told to wait. It returns an error matching ErrInvalidOption for an unusable
// option.
func New(opts ...Option) (*Throttle, error) {
	c := config{keyFunc: credentialKey(), maxKeys: DefaultMaxKeys, maxRoutes: DefaultMaxRoutes}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.keyFunc == nil {
		return nil, fmt.Errorf("%w: nil key function", ErrInvalidOption)
	}
	if c.maxWait < 0 {
		return nil, fmt.Errorf("%w: maximum wait must not be negative, got %v", ErrInvalidOption, c.maxWait)
	}
	if c.hasMaxPause && c.maxPause < 0 {
		return nil, fmt.Errorf("%w: maximum pause must not be negative, got %v", ErrInvalidOption, c.maxPause)
	}
	if c.maxKeys < 1 {
		return nil, fmt.Errorf("%w: maximum number of keys must be at least 1, got %d", ErrInvalidOption, c.maxKeys)
	}
	if c.maxRoutes < 0 {
		return nil, fmt.Errorf("%w: maximum number of routes must not be negative, got %d", ErrInvalidOption, c.maxRoutes)
	}
	return &Throttle{
		keyFunc:     c.keyFunc,
		factory:     c.factory,
		maxKeys:     c.maxKeys,
		onWait:      c.onWait,
		maxWait:     c.maxWait,
		maxPause:    c.maxPause,
		hasMaxPause: c.hasMaxPause,
		epoch:       time.Now(),
		parts:       make(map[string]*partition),
		routes:      routes{max: c.maxRoutes},
	}, nil
}

// Wait blocks until a request for key may be sent: after the key's pause, if any, and after the
// key's limiter, if any, lets it go. It checks ctx first; it returns *WouldExceedDeadlineError at
// once, without waiting, when the pause or the limiter's predicted wait ends after ctx's deadline;
// it returns ctx.Err() as soon as ctx ends while waiting; every reservation it gives up is given
// back. It also returns the limiter's refusal (such as *BacklogFullError), a wrapped factory
// error, or ErrTooManyKeys. Each Wait books one request, of the cost request.WithCost set in ctx
// when the key's limiter is a CostReserver; the Transport calls it for every attempt.
// A maximum wait set in ctx (request.WithMaxWait) replaces WithMaxWait's; invalid settings in ctx
// (request.ErrInvalid) are returned at once.
func (t *Throttle) Wait(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	set := request.From(ctx)
	if err := set.Err(); err != nil {
		return err
	}
	maxWait, ok := set.MaxWait()
	if !ok {
		maxWait = t.maxWait
	}
	p, err := t.acquire(key, "")
	if err != nil {
		return err
	}
	defer p.refs.Add(-1)
	_, _, err = t.waitBlocked(ctx, p, maxWait, costOf(set), nil)
	return err
}

// Pause holds back every request for key until the instant until: requests waiting on a limiter
// reservation that would come due before until give it back and wait, the others keep their place,
// and new ones wait too. A later until extends the
// pause; an earlier one never shortens it (SetPause does); a time in the past does nothing. Pause
// is not bounded by WithMaxPause. Pause creates the key's partition when needed; if the Throttle
// is full of busy keys (see WithMaxKeys) the pause is dropped.
func (t *Throttle) Pause(key string, until time.Time) {
	u := t.since(until)
	if u <= t.since(time.Now()) {
		return
	}
	t.mu.Lock()
	p := t.lookup(key, "")
	t.mu.Unlock()
	if p != nil {
		p.pause(u)
	}
}

// SetPause sets the pause of key to end at until, whether that is sooner or later than the pause
// it has: requests sitting out the pause leave at the new end (at once when until is not after
// now), and requests waiting on the key's limiter hold back when the new pause reaches past them.
// A zero or past until ends the pause, as Resume does. SetPause creates the key's partition only to
// set a pause that has not ended; if the Throttle is full of busy keys (see WithMaxKeys) that
// pause is dropped.
func (t *Throttle) SetPause(key string, until time.Time) {
	u := t.since(until)
	if until.IsZero() || u <= t.since(time.Now()) {
		t.Resume(key)
		return
	}
	t.mu.Lock()
	p := t.lookup(key, "")
	t.mu.Unlock()
	if p != nil {
		p.setPause(u)
	}
}

// Resume ends the pause of key now, however it was set (a server's Retry-After, Pause, SetPause):
// the requests sitting it out go on to the key's limiter at once, and a limiter that holds on a
// Retry-After of its own (a Resumer: the learning limiter, or throttle/redisthrottle's pause shared
// through Redis, which costs one call to Redis whether or not one runs) ends that hold too. It
// does nothing for a key that the Throttle holds no state for, and does not count as a use of the
// key.
func (t *Throttle) Resume(key string) {
	t.mu.RLock()
	p := t.parts[key]
	t.mu.RUnlock()
	if p == nil {
		return
	}
	if p.pauseUntil.Load() != 0 {
		p.setPause(0)
	}
	if !p.limInit.Load() {
		return
	}
	if r, ok := p.lim.(Resumer); ok {
		r.Resume(time.Now()) // the limiter's own hold on the Retry-After (throttle/learn)
	}
}

// PausedUntil reports when the pause of key ends, or the zero time when key is not paused now.
// It does not count as a use of the key.
func (t *Throttle) PausedUntil(key string) time.Time {
	t.mu.RLock()
	p := t.parts[key]
	t.mu.RUnlock()
	if p == nil {
		return time.Time{}
	}
	now := time.Now()
	if u := p.pauseUntil.Load(); u > t.since(now) {
		return t.epoch.Add(time.Duration(u))
	}
	return time.Time{}
}

// Limiter returns the Limiter that paces key, or nil when the key has none or the Throttle holds
// no state for it (never used, or evicted). It does not count as a use of the key. Use it to read
// what a learning limiter has learned, for example (*learn.Learner).Rate.
func (t *Throttle) Limiter(key string) Limiter {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if p := t.parts[key]; p != nil && p.limInit.Load() {
		return p.lim
	}
	return nil
}

// Len reports the number of keys the Throttle currently holds state for (at most WithMaxKeys).
func (t *Throttle) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.parts)
}

// since converts tm to nanoseconds since the epoch (saturating, monotonic when both have it).
func (t *Throttle) since(tm time.Time) int64 { return int64(tm.Sub(t.epoch)) }

// lookup returns the partition of key, creating it (and evicting an idle one to make room) when
// needed, as a bucket of base when base is not "", and marks it most recently used. It returns nil
// when the set is full of busy partitions. t.mu is held.
func (t *Throttle) lookup(key, base string) *partition {
	if p := t.parts[key]; p != nil {
		t.lru.touch(p)
		return p
	}
	if len(t.parts) >= t.maxKeys && !t.evictOne() {
		return nil
	}
	p := &partition{key: key}
	if key != base {
		p.base = base
	}
	t.parts[key] = p
	t.lru.pushFront(p)
	return p
}

// evictOne removes the least recently used partition that no request is using; t.mu is held.
func (t *Throttle) evictOne() bool {
	for p := t.lru.oldest; p != nil; p = p.newer {
		if p.refs.CompareAndSwap(0, evictedRefs) {
			t.lru.remove(p)
			delete(t.parts, p.key)
			return true
		}
	}
	return false
}

// acquire returns the partition of key (a bucket of base, when base is not "" and not key) with its
// limiter created and its reference count raised; the caller lowers it (p.refs.Add(-1)) when its
// request is done.
func (t *Throttle) acquire(key, base string) (*partition, error) {
	// Fast path, no lock: the key is already the most recently used one (a hot key), and was not
	// evicted before its count was raised (eviction swaps a count of 0 for evictedRefs).
	if p := t.lru.head.Load(); p != nil && p.key == key && p.limInit.Load() {
		if p.refs.Add(1) > 0 {
			return p, nil
		}
		p.refs.Add(-1)
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.lookup(key, base)
	if p == nil {
		return nil, ErrTooManyKeys
	}
	if !p.limInit.Load() {
		if hp := t.parts[p.base]; p.base != "" && hp != nil && hp.limInit.Load() && hp.home != "" && p.key == BucketKey(p.base, hp.home) {
			// The key's home bucket: the quota the key's own limiter has learned from every
			// answer so far. A limiter of its own would start from nothing, its first requests
			// spending a quota the key's limiter had spent already (GitHub's core, Discord's
			// first bucket: 11 throttles at 5/s in the first seconds).
			p.lim, p.learner, p.costs, p.attempts = hp.lim, hp.learner, hp.costs, hp.attempts
			p.sharesBase = true
		} else if t.factory != nil {
			lim, err := t.factory(key)
			if err != nil {
				return nil, fmt.Errorf("throttle: creating the limiter for key %q: %w", key, err)
			}
			p.lim = lim
			p.learner, _ = lim.(Learner)
			p.costs, _ = lim.(CostReserver)
			p.attempts, _ = lim.(AttemptLearner)
		}
		p.limInit.Store(true)
	}
	p.refs.Add(1)
	return p, nil
}

// costOf is the cost request.WithCost set, or 0 when none was set.
func costOf(set request.Settings) int64 {
	if c, ok := set.Cost(); ok {
		return int64(c)
	}
	return 0
}

// waitBlocked waits for permission to send one request on p (which the caller holds), refusing
// waits longer than maxWait as WithMaxWait describes (0: no bound); see Wait. A cost above 0 is
// reserved with the limiter's ReserveN when it is a CostReserver. It reports whether it held the
// request back (a pause or a limiter delay), for the wait observer. When began is not nil and
// holds the zero time, it receives the wait's first reading of the clock (for
// startedat.RoundTripper); it stays zero when the wait read none (no pause, no limiter).
func (t *Throttle) waitBlocked(ctx context.Context, p *partition, maxWait time.Duration, cost int64, began *time.Time) (blocked bool, due time.Time, err error) {
	for {
		if until := p.pauseUntil.Load(); until > 0 { // ever paused; the common case skips the call
			now := time.Now()
			if began != nil && began.IsZero() {
				*began = now
			}
			if until > t.since(now) {
				blocked = true
			}
			if err := t.sitOutPause(ctx, p, maxWait); err != nil {
				return blocked, time.Time{}, err
			}
		}
		if p.lim == nil {
			return blocked, time.Time{}, nil
		}
		now := t.clock.Now()
		if began != nil && began.IsZero() {
			*began = now
		}
		var r Reservation
		if cost > 0 && p.costs != nil {
			r, err = p.costs.ReserveN(now, cost)
		} else {
			r, err = p.lim.Reserve(now)
		}
		if err != nil {
			return blocked, time.Time{}, err
		}
		if r.Delay(now) > 0 || p.pauseUntil.Load() > t.since(now) {
			blocked = true
			paused, late, err := await(ctx, r, t.pauseWatch(p, maxWait), func() time.Duration { return t.paceMaxWait(p, r, maxWait) })
			if err != nil {
				if e, ok := err.(*WaitTooLongError); ok {
					e.Key = p.key
				}
				return blocked, time.Time{}, err
			}
			if paused {
				continue // the reservation fell inside a pause and was given back; wait it out and book again
			}
			now = t.clock.Now()
			observeLateness(p.lim, now, late)
		}
		if p.pauseUntil.Load() <= t.since(now) {
			return blocked, now, nil
		}
		// Paused just as the reservation came due: it is spent; wait out the pause and book again.
	}
}

// pauseWatch watches p's pause for await. A pause that lasts longer than maxWait (when positive)
// is reported as endless, so that every reservation gives way to it and sitOutPause refuses it
// with *WaitTooLongError, as WithMaxWait promises, even one whose slot comes after the pause.
func (t *Throttle) pauseWatch(p *partition, maxWait time.Duration) pauseWatch {
	return func() (<-chan struct{}, time.Time) {
		changed := p.pauseSignal()
		until := p.pauseUntil.Load()
		if until <= 0 {
			return changed, time.Time{}
		}
		end := t.epoch.Add(time.Duration(until))
		if maxWait > 0 && time.Until(end) > maxWait {
			return changed, endless
		}
		return changed, end
	}
}

// endless is a time after any reservation's.
var endless = time.Unix(1<<62, 0)

// paceMaxWait is the longest wait for p's limiter that is accepted: WithMaxWait's maximum when the
// limiter learns its pace from the server (a Learner with a Rate) and that pace alone is slower than
// one request per maximum, or when the reservation waits for a hold or a window the server's limit
// asked for (a HeldReservation), else no bound (a known pace, or a wait that is long only because
// many requests are in line, is waited out).
func (t *Throttle) paceMaxWait(p *partition, r Reservation, maxWait time.Duration) time.Duration {
	if maxWait <= 0 || p.learner == nil {
		return 0
	}
	if h, ok := r.(HeldReservation); ok && h.Held() {
		return maxWait
	}
	rl, ok := p.lim.(interface{ Rate() float64 })
	if !ok {
		return 0
	}
	rate := rl.Rate()
	if sr, ok := p.lim.(ServerRater); ok {
		if r := sr.ServerRate(); r > 0 {
			rate = r // the server's, not the share the limiter leaves to other clients
		}
	}
	if rate > 0 && float64(maxWait) < float64(time.Second)/rate {
		return maxWait
	}
	return 0
}

// sitOutPause waits until p's pause, if any, is over; it looks again whenever the pause changes.
func (t *Throttle) sitOutPause(ctx context.Context, p *partition, maxWait time.Duration) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if p.pauseUntil.Load() <= 0 {
			return nil // never paused: the common case costs no clock reading
		}
		changed := p.pauseSignal() // before reading the pause, so that no change is missed
		until := p.pauseUntil.Load()
		now := time.Now()
		d := time.Duration(until - t.since(now))
		if d <= 0 {
			return nil
		}
		if deadline, ok := ctx.Deadline(); ok && d > deadline.Sub(now) {
			return &WouldExceedDeadlineError{Wait: d}
		}
		if maxWait > 0 && d > maxWait {
			return &WaitTooLongError{Key: p.key, Wait: d, Max: maxWait, Paused: true}
		}
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed: // extended, shortened or ended: look again
		case <-timer.C:
			// The pause may have been extended meanwhile: look again.
		}
	}
}
