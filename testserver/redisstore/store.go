package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Store is a testserver.Store that keeps every rule's per-key state in Redis, so that any number
// of testserver instances (or Limiters) sharing one Redis enforce one limit together. Each Apply
// runs one Lua script that reads, decides and writes all the request's checks atomically; the
// Applies in flight at the same moment share round trips (see the package documentation for the
// semantics, bounds, key names and failure policy).
//
// A Store is safe for concurrent use. It starts no goroutines of its own, except, for a client
// that does not honour context deadlines (Options.ContextTimeoutEnabled false), one per round trip
// that waits for the client's reply after the deadline gave up on it; Close waits for those.
type Store struct {
	cfg       *config
	client    redis.UniversalClient
	ownClient bool
	// sharded: a Cluster or Ring client, under which the keys of one Apply must share a tag.
	sharded bool
	// direct: the client honours context deadlines, so a call returns by the deadline by itself.
	direct   bool
	fallback *testserver.MemoryStore
	scaled   sync.Map // scaleKey -> algorithm.Algorithm
	circuit  circuit
	batch    coalescer
	ledger   ledger
	// deadlines ends the round trips' contexts at their deadlines (deadline.go).
	deadlines deadlines
	// fcall: Redis has the library (scripts.go), and decisions call its functions instead of
	// running the scripts. libraryLost: a call found a function missing (Redis restarted without
	// its data, or FUNCTION FLUSH), or the library could not be loaded for want of an answer (Redis
	// not up when the store opened, a master down): the heartbeat loads it again.
	fcall, libraryLost atomic.Bool

	id        string       // this store's registration (registry.go)
	instances atomic.Int64 // instances registered, as last seen
	stop      chan struct{}
	beats     sync.WaitGroup

	mu     sync.Mutex // guards closed against calls starting while Close waits
	closed bool
	calls  sync.WaitGroup
	done   atomic.Bool

	decided, roundTrips, timeouts, errs, circuitOpened, skipped atomic.Int64
	fallbacks, failOpen, failClosed                             atomic.Int64
}

// New returns a Store deciding on client, which the caller keeps and closes (after the Store).
// The client may be a *redis.Client, a *redis.ClusterClient or a *redis.Ring (keys of one request
// must then share a hash tag; see WithHashTag); any other UniversalClient is treated as one server.
// Set ContextTimeoutEnabled in the client's options so that calls end at the store's deadline;
// without it the store still returns by the deadline, but the abandoned call runs on in a
// goroutine until the client's own ReadTimeout. Before it returns, New loads the scripts (SCRIPT
// LOAD) and their library (FUNCTION LOAD, on Redis 7 and later; see scripts.go) and opens the
// connections of WithPipelines, so that the first burst finds them ready,
// giving Redis StartupTimeout for it; it succeeds without them: a store starts while Redis is
// down and decides by policy until it comes up. A nil client or a bad option is an error matching
// testserver.ErrInvalidOption.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, optionErr("New", "nil", "a Redis client is required")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	fb, err := testserver.NewMemoryStore(cfg.fallbackKeys)
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, client: client, fallback: fb}
	s.circuit.interval = cfg.retryInterval
	s.circuit.window = cfg.failureWindow
	s.batch.max = cfg.pipelines
	switch c := client.(type) {
	case *redis.Client:
		s.direct = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		s.sharded, s.direct = true, c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		s.sharded, s.direct = true, c.Options().ContextTimeoutEnabled
	}
	s.ledger.max = cfg.fallbackKeys
	if s.ledger.max == 0 {
		s.ledger.max = testserver.DefaultMaxKeys
	}
	s.id, s.stop = newInstanceID(), make(chan struct{})
	s.warmUp()
	s.beats.Add(1)
	go s.heartbeat()
	return s, nil
}

// StartupTimeout is how long New waits for Redis to load the script and open the store's
// connections. A cold connection costs three round trips before its first decision (TCP, the
// HELLO handshake, SCRIPT LOAD), which a Redis across a slow link cannot fit in a decision's
// deadline; a second covers them at any round trip a shared limit is usable with, and a Redis
// that needs longer is treated as down: the store starts anyway.
const StartupTimeout = time.Second

// loadLibrary loads the library of the decision functions (FUNCTION LOAD REPLACE; on every master
// of a Cluster, every shard of a Ring) and reports whether Redis has it. Then decisions call its
// functions (FCALL); until then, and for good when Redis has no functions (before Redis 7) or
// refuses them (an ACL without FUNCTION), they run the scripts (EVALSHA).
func (s *Store) loadLibrary(ctx context.Context) bool {
	load := func(ctx context.Context, c redis.Cmdable) error {
		return c.FunctionLoadReplace(ctx, library.src).Err()
	}
	_, err := s.call(ctx, func(ctx context.Context) (any, error) {
		switch c := s.client.(type) {
		case *redis.ClusterClient:
			return nil, c.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return load(ctx, c) })
		case *redis.Ring:
			return nil, c.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return load(ctx, c) })
		}
		return nil, load(ctx, s.client)
	})
	if err != nil {
		// Redis without functions (before 7) or an ACL without FUNCTION: the scripts for good.
		// Anything else (Redis not up yet, slow, a master down): the heartbeat tries again.
		s.libraryLost.Store(!redis.HasErrorPrefix(err, "unknown command") && !redis.HasErrorPrefix(err, "NOPERM"))
		return false
	}
	s.libraryLost.Store(false)
	s.fcall.Store(true)
	return true
}

// warmUp loads the scripts and the library and opens one connection per pipeline, each held at
// once so that they are distinct (for a Cluster client, per master; and in go-redis's pipeline pool when the client
// has one), within StartupTimeout. Failures are ignored:
// Apply reconnects and reloads on its own.
func (s *Store) warmUp() {
	ctx, cancel := context.WithTimeout(context.Background(), StartupTimeout)
	defer cancel()
	for _, sc := range []*luaScript{scriptOne, scriptMany} {
		if _, err := s.call(ctx, func(ctx context.Context) (any, error) { return sc.Load(ctx, s.client).Result() }); err != nil {
			s.libraryLost.Store(true) // not loaded either: the heartbeat loads it once Redis answers
			return
		}
	}
	s.loadLibrary(ctx)
	s.register(ctx)
	open := func(ctx context.Context, c *redis.Client) error {
		conns := make([]*redis.Conn, s.cfg.pipelines)
		var wg sync.WaitGroup
		for i := range conns {
			conns[i] = c.Conn()
			wg.Go(func() { _ = conns[i].Ping(ctx).Err() })
			// A client with go-redis's separate pipeline pool runs batches there.
			wg.Go(func() {
				_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error { return p.Ping(ctx).Err() })
			})
		}
		wg.Wait()
		for _, cn := range conns {
			_ = cn.Close() // back to the pool
		}
		return nil
	}
	_, _ = s.call(ctx, func(ctx context.Context) (any, error) {
		switch c := s.client.(type) {
		case *redis.Client:
			return nil, open(ctx, c)
		case *redis.ClusterClient:
			return nil, c.ForEachMaster(ctx, open)
		}
		return nil, nil
	})
}

// Open connects to the Redis at rawURL (redis://[user:password@]host:port/db, or rediss:// for
// TLS; the forms of redis.ParseURL) with context deadlines honoured, no retries (a decision that
// fails is decided by policy, and the next asks again), and at least one idle connection per
// pipeline (WithPipelines) kept open, and returns a Store that owns the client: Close closes it. A malformed URL is an error matching testserver.ErrInvalidOption
// (with the password redacted).
func Open(rawURL string, opts ...Option) (*Store, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		shown := rawURL
		if u, perr := url.Parse(rawURL); perr == nil {
			shown = u.Redacted()
		}
		return nil, &testserver.OptionError{Option: "Open", Value: shown, Err: fmt.Errorf("%w: %w", testserver.ErrInvalidOption, err)}
	}
	o.ContextTimeoutEnabled = true
	// Keep the pipelines' connections open: a connection dialled during a burst costs round
	// trips (TCP, HELLO) that a decision's deadline cannot afford at a distance.
	o.PoolSize = max(o.PoolSize, 10*runtime.GOMAXPROCS(0), cfg.pipelines)
	o.MinIdleConns = max(o.MinIdleConns, cfg.pipelines)
	// Pipelines on the main pool, whose connections MinIdleConns keeps open: go-redis's separate
	// pipeline pool never pre-dials, so a burst would pay for new connections there.
	o.PipelinePoolSize = -1
	// No retries inside a decision: go-redis's backoffs (8 ms and up for a command, 100 ms for a
	// dial) would spend the deadline
	// and turn a refused connection into a missed deadline; the next decision asks again.
	o.MaxRetries = -1
	o.DialerRetries = 1
	client := redis.NewClient(o)
	s, err := New(client, opts...)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	s.ownClient = true
	return s, nil
}

// Ping asks Redis for PONG within the store's deadline (or ctx's, when shorter), for example to
// report at startup whether Redis is reachable. It does not touch the circuit or the counters.
func (s *Store) Ping(ctx context.Context) error {
	if s.done.Load() {
		return testserver.ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	_, err := s.call(ctx, func(ctx context.Context) (any, error) { return s.client.Ping(ctx).Result() })
	return err
}

// check is one StoreCheck in the script's terms.
type check struct {
	alg, pub params
	hasPub   bool
	policy   Policy
}

// Apply implements testserver.Store: it decides every check at once in Redis (at Redis's TIME, or
// at now with WithCallerClock), all-or-nothing. When Redis fails or misses the deadline, each
// check is decided by its rule's Policy (see the package documentation). Errors: ErrClosed after
// Close; the context's error when ctx ends first (nothing decided); ErrInvalidCheck, ErrUnsupported
// (a *CheckError) or ErrCrossSlot for checks the store cannot decide. Redis failures are not
// errors: they are decided by policy and counted (Counters).
func (s *Store) Apply(ctx context.Context, now time.Time, checks []testserver.StoreCheck) ([]testserver.StoreDecision, error) {
	if s.done.Load() {
		return nil, testserver.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var one [1]check // the usual request's, without an allocation
	cs := one[:0]
	if len(checks) > 1 {
		cs = make([]check, 0, len(checks))
	}
	cs, err := s.prepare(checks, cs)
	if err != nil || len(checks) == 0 {
		return nil, err
	}
	var nowArg string
	if s.cfg.callerClock {
		us := max(now.UnixMicro(), 0)
		if us > maxNowMicros {
			return nil, fmt.Errorf("%w: decision time %v is after %v", ErrUnsupported, now, time.UnixMicro(maxNowMicros))
		}
		nowArg = strconv.FormatInt(us, 10)
	}
	c, err := s.encode(checks, cs, nowArg, false)
	if err != nil {
		return nil, err
	}
	defer s.release(c)
	gen := s.circuit.generation()
	if !s.circuit.allow() {
		s.skipped.Add(1)
		return s.byPolicy(ctx, now, checks, cs)
	}
	c.gen = gen
	o := s.roundTrip(ctx, c)
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr // the caller gave up; not Redis's failure
	}
	if o.skipped {
		s.skipped.Add(1)
		return s.byPolicy(ctx, now, checks, cs)
	}
	if o.err != nil {
		if errors.Is(o.err, testserver.ErrClosed) {
			return nil, o.err
		}
		if isReplyError(o.err) {
			// A failed round trip was counted once for its whole batch; a script's error reply
			// is this decision's own.
			s.errs.Add(1)
			if s.cfg.onError != nil {
				s.cfg.onError(o.err)
			}
		}
		return s.byPolicy(ctx, now, checks, cs)
	}
	out, err := decode(o.reply, checks, cs)
	if err != nil {
		s.errs.Add(1)
		if s.cfg.onError != nil {
			s.cfg.onError(err)
		}
		return s.byPolicy(ctx, now, checks, cs)
	}
	s.decided.Add(1)
	return out, nil
}

// prepare validates the checks and translates them for the script, appending them to cs.
func (s *Store) prepare(checks []testserver.StoreCheck, cs []check) ([]check, error) {
	cs = cs[:len(checks)]
	for i := range checks {
		c := &checks[i]
		if c.N < 1 || c.Algorithm == nil {
			return nil, fmt.Errorf("%w: check %d (rule %q): N=%d, algorithm set: %t", testserver.ErrInvalidCheck, i, c.Rule, c.N, c.Algorithm != nil)
		}
		if c.N > MaxCount {
			return nil, unsupported(c.Rule, "n", fmt.Sprint(c.N), "must be at most 2^51")
		}
		if c.CountDenied {
			return nil, unsupported(c.Rule, "count_denied", "true", "the script commits admitted requests only")
		}
		p, err := paramsOf(c.Rule, c.Algorithm)
		if err != nil {
			return nil, err
		}
		cs[i] = check{alg: p, policy: s.cfg.policyOf(c.Rule)}
		if c.Publish != nil {
			q, err := paramsOf(c.Rule, c.Publish)
			if err != nil {
				return nil, err
			}
			if q.kind != p.kind || q.windowUS != p.windowUS {
				return nil, unsupported(c.Rule, "publish", c.Publish.Name()+" "+c.Publish.Window().String(),
					"must be the algorithm's kind and window (as algorithm.Scale makes it)")
			}
			cs[i].pub, cs[i].hasPub = q, true
		}
	}
	return cs, nil
}

// CallerClockMinTTL is the least time, by Redis's clock, a state written with WithCallerClock is
// kept after its last commit, however soon the caller's clock says it is idle: a replay that runs
// slower than real time must not see its states forgotten early. (Keeping an idle state longer
// changes no decision.)
const CallerClockMinTTL = 10 * time.Minute

// argsPerCheck is the number of script arguments per check (see script_shared.lua); a lone
// check may send fewer.
const argsPerCheck = 9

// noMaxDelay is the script's max delay argument for a check without one, converted once.
var noMaxDelay any = int64(-1)

// maxDelayArg returns the script's max delay argument for d: µs, or -1 for none.
func maxDelayArg(d time.Duration) any {
	if d > 0 {
		return int64(d / time.Microsecond)
	}
	return noMaxDelay
}

// encode builds the call that runs the script deciding checks: its FCALL command (the function's
// name, when Redis has the library) or EVALSHA command (the script's hash), its keys and its
// arguments in one slice, handed to go-redis as it is. charge makes every
// check a charge (committed whatever the decision: see script_shared.lua).
func (s *Store) encode(checks []testserver.StoreCheck, cs []check, nowArg string, charge bool) (*call, error) {
	nkeys := len(checks)
	for i := range cs {
		if cs[i].alg.kind == kindSlidingLog {
			nkeys++
		}
	}
	sc := scriptFor(len(checks))
	c := newCall(sc)
	cmd := c.buf[:0]
	if n := 3 + nkeys + 3 + argsPerCheck*len(checks); n > len(c.buf) {
		cmd = make([]any, 0, n)
	}
	if s.fcall.Load() {
		cmd = append(cmd, "fcall", sc.fn, nkeys)
	} else {
		cmd = append(cmd, "evalsha", sc.sha, nkeys)
	}
	minTTL := int64(0)
	if s.cfg.callerClock {
		minTTL = int64(CallerClockMinTTL / time.Microsecond)
	}
	first := ""
	for i := range checks {
		ch, p := &checks[i], &cs[i]
		tag := s.cfg.tagOf(ch.Rule, ch.Key)
		if i == 0 {
			first = tag
		} else if s.sharded && tag != first {
			return nil, fmt.Errorf("%w: rule %q has tag %q, rule %q has %q (see WithHashTag)", ErrCrossSlot, checks[0].Rule, first, ch.Rule, tag)
		}
		cmd = append(cmd, s.cfg.keyName(tag, ch.Scope, ch.Key, suffixState))
		if p.alg.kind == kindSlidingLog {
			cmd = append(cmd, s.cfg.keyName(tag, ch.Scope, ch.Key, suffixLog))
		}
	}
	cmd = append(cmd, nowArg, minTTL, len(checks))
	for i := range checks {
		ch, p := &checks[i], &cs[i]
		adv := 0
		switch {
		case charge:
			adv = 2
		case ch.Advisory:
			adv = 1
		}
		cmd = append(cmd, int64(p.alg.kind), ch.N, adv, p.alg.limit, p.alg.burst, p.alg.windowUS)
		// The optional three: left out of a lone check that has neither (see script_shared.lua).
		switch {
		case len(checks) > 1 || p.hasPub:
			cmd = append(cmd, maxDelayArg(ch.MaxDelay), p.pub.limit, p.pub.burst)
		case ch.MaxDelay > 0:
			cmd = append(cmd, maxDelayArg(ch.MaxDelay))
		}
	}
	c.cmd = cmd
	return c, nil
}

// The script's reply per check: replyPerCheck integers (the decision's five and committed), and
// replyPublish more when the check has a publish algorithm. Not repeating the decision as the
// published one saves Redis and the client five integers in the usual check.
const (
	replyPerCheck = 6
	replyPublish  = 5
)

// decode turns the script's reply into decisions.
func decode(reply any, checks []testserver.StoreCheck, cs []check) ([]testserver.StoreDecision, error) {
	vals, ok := reply.([]any)
	want := replyPerCheck * len(checks)
	for i := range cs {
		if cs[i].hasPub {
			want += replyPublish
		}
	}
	if !ok || len(vals) != want {
		return nil, fmt.Errorf("%w: %T of length %d for %d checks", ErrReply, reply, len(vals), len(checks))
	}
	var ints [replyPerCheck + replyPublish]int64
	out := make([]testserver.StoreDecision, len(checks))
	at := 0
	for i := range checks {
		n := replyPerCheck
		if cs[i].hasPub {
			n += replyPublish
		}
		for j, v := range vals[at : at+n] {
			x, ok := v.(int64)
			if !ok {
				return nil, fmt.Errorf("%w: element %d is %T", ErrReply, at+j, v)
			}
			ints[j] = x
		}
		at += n
		out[i].Decision = decision(ints[0:5], cs[i].alg.limit, checks[i].MaxDelay)
		if cs[i].hasPub {
			out[i].Published = decision(ints[6:11], cs[i].pub.limit, checks[i].MaxDelay)
		} else {
			out[i].Published = out[i].Decision
		}
		out[i].Committed = ints[5] == 1
	}
	return out, nil
}

// decision turns the script's five figures (allowed, remaining, reset µs, retry µs, delay µs) into
// a Decision.
func decision(v []int64, limit int64, maxDelay time.Duration) algorithm.Decision {
	d := algorithm.Decision{Allowed: v[0] == 1, Limit: limit, Remaining: v[1], ResetAfter: micros(v[2])}
	switch {
	case v[3] == -1:
		d.RetryAfter = algorithm.Never
	case v[3] == -2: // admitted, but its slot is later than the check's MaxDelay
		d.RetryAfter = micros(v[4]) - maxDelay
	default:
		d.RetryAfter = micros(v[3])
	}
	if d.Allowed {
		d.Delay = micros(v[4])
	}
	return d
}

func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// call runs f with ctx, returning by ctx's deadline even when the client would not.
func (s *Store) call(ctx context.Context, f func(context.Context) (any, error)) (any, error) {
	if s.direct {
		return f(ctx)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, testserver.ErrClosed
	}
	s.calls.Add(1)
	s.mu.Unlock()
	type result struct {
		v   any
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer s.calls.Done()
		v, err := f(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// DecidesOnOwnClock reports whether Apply decides at Redis's clock (the default) rather than at
// the now it is given (WithCallerClock): testserver.OwnClockStore, so that the middleware leaves
// the waits it returns as they are. It is safe for concurrent use.
func (s *Store) DecidesOnOwnClock() bool { return !s.cfg.callerClock }

var _ testserver.OwnClockStore = (*Store)(nil)

// Stats implements testserver.Store. Its size and evictions are the Fallback policy's local
// store's: Redis's keys are not counted (they expire on their own once idle; ask Redis with
// SCAN), and Redis expiry is not an eviction. Shared reports the store's Counters.
func (s *Store) Stats() testserver.StoreStats {
	st := s.fallback.Stats()
	c := s.Counters()
	st.Shared = &c
	return st
}

// Counters returns how the store's decisions were made so far: Applies decided by Redis, round
// trips, timeouts and errors, the circuit, and the checks decided by policy. Safe for concurrent
// use.
func (s *Store) Counters() testserver.SharedStats {
	charged, uncharged := s.ledger.counts()
	instances := s.cfg.instances
	if instances == 0 {
		instances = s.instances.Load()
	}
	return testserver.SharedStats{
		Instances:     instances,
		Decided:       s.decided.Load(),
		RoundTrips:    s.roundTrips.Load(),
		Timeouts:      s.timeouts.Load(),
		Errors:        s.errs.Load(),
		Circuit:       s.circuit.state(),
		CircuitOpened: s.circuitOpened.Load(),
		Skipped:       s.skipped.Load(),
		Fallback:      s.fallbacks.Load(),
		FailOpen:      s.failOpen.Load(),
		FailClosed:    s.failClosed.Load(),
		FallbackShare: s.currentShare(),
		Reconciled:    charged,
		Unreconciled:  uncharged,
	}
}

// Close implements testserver.Store: Apply afterwards returns testserver.ErrClosed. It closes the
// client when the store owns it (Open), waits for calls abandoned at their deadline to end, and
// drops the local fallback state. It is idempotent; later calls return nil.
func (s *Store) Close() error {
	if s.done.Swap(true) {
		return nil
	}
	close(s.stop)
	s.beats.Wait()
	s.deregister()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	var err error
	if s.ownClient {
		err = s.client.Close()
	}
	s.calls.Wait()
	_ = s.fallback.Close()
	return err
}
