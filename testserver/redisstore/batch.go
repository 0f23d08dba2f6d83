package redisstore

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/testserver"
)

// DefaultPipelines is the default number of round trips the store keeps in flight to Redis
// (WithPipelines). Decisions that arrive while all of them are in flight wait for the first to
// come back and then share the next round trip, so a burst of any size costs a few round trips
// instead of a queue for connections. The model: Redis runs scripts one at a time, so one round
// trip in flight already carries every waiting decision; a second lets Redis work on one batch
// while the other travels or is decoded, and two more halve the time a decision arriving
// mid-flight waits for a free round trip (on average a quarter of a round trip instead of a
// half). Each costs one connection, opened before serving.
const DefaultPipelines = 4

// call is one Apply's script run, waiting for its round trip. Calls are recycled (newCall,
// release) by a store whose client honours deadlines: nothing holds one after its Apply returns
// (its round trip has ended, by its reply or its deadline; go-redis keeps neither the command nor
// the context after Process returns). A call a decision makes this way costs no allocation, and
// the memory of a lone caller's decisions is the same few cache lines over and over rather than
// 400 fresh bytes each (measured: a lone caller is several percent slower against redis_rate when
// every allocation is fresh, GOGC=off).
type call struct {
	script *luaScript
	// cmd is the FCALL or EVALSHA command: "fcall" or "evalsha", the function's name or the
	// script's hash, the number of keys, the keys, the arguments (see encode).
	cmd []any
	// buf holds cmd for a request of one check (3 + 1 key + 3 + argsPerCheck), so that the call
	// and its command are one allocation.
	buf [16]any
	gen int64 // the circuit's generation when the call was allowed
	// done receives the outcome, or a batch to lead; exactly one message per call. Made when the
	// call first waits (a call that leads at once, as a lone caller's, needs none) and kept when the
	// call is recycled: it is empty again once the message is received.
	done chan outcome
	// out is the outcome, set by the round trip that carried the call (send).
	out outcome
	// alone holds the batch of a call that leads a round trip by itself (a lone caller).
	alone [1]*call
}

// callPool holds recycled calls (see call).
var callPool = sync.Pool{New: func() any { return new(call) }}

// newCall returns a call of sc: recycled, or new.
func newCall(sc *luaScript) *call {
	c := callPool.Get().(*call)
	c.script = sc
	return c
}

// release recycles c, whose Apply is over, when the store's client honours deadlines (else the
// goroutine a missed deadline left behind may still be sending c).
func (s *Store) release(c *call) {
	if !s.direct {
		return
	}
	*c = call{done: c.done}
	callPool.Put(c)
}

// outcome is the end of a call's round trip.
type outcome struct {
	reply any
	err   error
	// timeout: the round trip missed its deadline (err says so too).
	timeout bool
	// skipped: the circuit opened while the call waited; Redis was not asked.
	skipped bool
	// lead, when set, makes the receiver run this batch (which contains it) and hand on.
	lead []*call
}

// coalescer holds the calls waiting for a round trip. At most max round trips are in flight; a
// call that finds one free leads it with everything waiting, a call that does not waits, and the
// leader of a finished round trip hands the next batch to the first waiter. No goroutine of its
// own: callers carry the round trips. A lone caller always finds one free, so it sends its script
// at once from its own goroutine (one EVALSHA, no wait, no hand-off); only calls that arrive while
// every round trip is in flight are batched.
type coalescer struct {
	max      int
	mu       sync.Mutex
	pending  []*call
	inflight int
}

// roundTrip runs c's script in a round trip it shares with the calls in flight alongside it, and
// returns its outcome. When ctx ends before c is sent, it returns ctx's error (nothing was asked);
// after, c's outcome still arrives (Redis may have decided it) and ctx's error is returned.
func (s *Store) roundTrip(ctx context.Context, c *call) outcome {
	b := &s.batch
	b.mu.Lock()
	if b.inflight < b.max {
		b.inflight++
		batch := b.pending
		if batch == nil {
			batch = c.alone[:0]
		}
		batch = append(batch, c)
		b.pending = nil
		b.mu.Unlock()
		return s.lead(batch, c)
	}
	if c.done == nil {
		c.done = make(chan outcome, 1)
	}
	b.pending = append(b.pending, c)
	b.mu.Unlock()
	select {
	case o := <-c.done:
		if o.lead != nil {
			return s.lead(o.lead, c)
		}
		return o
	case <-ctx.Done():
	}
	b.mu.Lock()
	if i := slices.Index(b.pending, c); i >= 0 {
		b.pending = slices.Delete(b.pending, i, i+1)
		b.mu.Unlock()
		return outcome{err: ctx.Err()}
	}
	b.mu.Unlock()
	// Taken into a batch: its round trip ends by its deadline.
	o := <-c.done
	if o.lead != nil {
		s.lead(o.lead, c) // the others wait for it
	}
	return outcome{err: ctx.Err()}
}

// lead runs batch (which contains self), delivers every other call's outcome, hands the next
// batch to the first waiter (or frees the round trip), and returns self's outcome.
func (s *Store) lead(batch []*call, self *call) outcome {
	s.send(batch)
	for _, c := range batch {
		if c != self {
			c.done <- c.out
		}
	}
	b := &s.batch
	b.mu.Lock()
	next := b.pending
	b.pending = nil
	if len(next) == 0 {
		b.inflight--
	}
	b.mu.Unlock()
	if len(next) > 0 {
		next[0].done <- outcome{lead: next}
	}
	return self.out
}

// send makes one round trip for batch (EVALSHA, pipelined when there are several; EVAL for those
// Redis answers NOSCRIPT, after a restart), within the store's deadline, and records it in the
// counters and the circuit. Each call's outcome is left in its out.
func (s *Store) send(batch []*call) {
	live := make([]int, 0, len(batch))
	for i, c := range batch {
		if s.circuit.reopenedSince(c.gen) {
			c.out = outcome{skipped: true}
			continue
		}
		live = append(live, i)
	}
	if len(live) == 0 {
		return
	}
	// Admissions the Fallback policy made while Redis was away go first, so that the decisions of
	// this round trip see them.
	debts := s.ledger.take()
	calls, skip := batch, 0
	if len(debts) > 0 || len(live) < len(batch) {
		calls = s.debtCalls(debts)
		skip = len(calls)
		for _, i := range live {
			calls = append(calls, batch[i])
		}
	}
	ctx := s.deadlines.start(s.cfg.timeout)
	defer ctx.cancel()
	s.roundTrips.Add(1)
	var rs []result
	var err error
	if s.direct {
		// What s.call does for a direct client, without the closure it would cost; a lone call's
		// result stays on this stack.
		var one [1]result
		rs = one[:0]
		if len(calls) > 1 {
			rs = make([]result, 0, len(calls))
		}
		rs, err = s.exec(ctx, calls, rs)
	} else {
		var v any
		if v, err = s.call(ctx, func(ctx context.Context) (any, error) {
			return s.exec(ctx, calls, make([]result, 0, len(calls)))
		}); err == nil {
			rs = v.([]result)
		}
	}
	if err != nil {
		end := time.Now()
		s.ledger.settle(debts, false)
		closed := errors.Is(err, testserver.ErrClosed)
		timeout := !closed && (ctx.Err() != nil || isTimeout(err))
		switch {
		case timeout:
			err = &TimeoutError{Timeout: s.cfg.timeout, Err: err}
			s.timeouts.Add(int64(len(live)))
		case !closed:
			s.errs.Add(1)
		}
		if !closed {
			if cc, ok := s.client.(*redis.ClusterClient); ok {
				// A master may have failed over: go-redis relearns the slots only on a redirect
				// or once a minute, and a dead master redirects nobody.
				cc.ReloadState(ctx)
			}
			if s.circuit.failure(end, refused(err)) {
				s.circuitOpened.Add(1)
			}
			if s.cfg.onError != nil {
				s.cfg.onError(err)
			}
		}
		for _, i := range live {
			batch[i].out = outcome{err: err, timeout: timeout}
		}
		return
	}
	s.ledger.settle(debts, true)
	s.circuit.success()
	rs = rs[skip:]
	for j, i := range live {
		batch[i].out = outcome{reply: rs[j].v, err: rs[j].err}
	}
}

// result is one script run's reply.
type result struct {
	v   any
	err error
}

// exec runs the scripts of calls on the client: one FCALL or EVALSHA alone, or a pipeline; those
// Redis answers NOSCRIPT, or does not find the function of, run again by EVAL (which also loads
// the script). It returns the results, in
// out (empty, with room for one per call). The error is a failure of the round trip; a script's
// own error is in its result.
func (s *Store) exec(ctx context.Context, calls []*call, out []result) ([]result, error) {
	out = out[:len(calls)]
	if len(calls) == 1 {
		c := calls[0]
		cmd := evalSha(ctx, c)
		err := s.client.Process(ctx, cmd)
		if s.runAsScript(c, err) {
			cmd = eval(ctx, c)
			err = s.client.Process(ctx, cmd)
		}
		if err != nil && !isReplyError(err) {
			return nil, err
		}
		out[0] = result{cmd.Val(), err}
		return out, nil
	}
	cmds := make([]*redis.Cmd, len(calls))
	pipe := s.client.Pipeline()
	for j, c := range calls {
		cmds[j] = evalSha(ctx, c)
		_ = pipe.Process(ctx, cmds[j])
	}
	if _, err := pipe.Exec(ctx); err != nil && !isReplyError(err) {
		return nil, err
	}
	var again []int
	for j, cmd := range cmds {
		v, err := cmd.Result()
		if s.runAsScript(calls[j], err) {
			again = append(again, j)
			continue
		}
		if err != nil && !isReplyError(err) {
			return nil, err
		}
		out[j] = result{v, err}
	}
	if len(again) > 0 {
		pipe := s.client.Pipeline()
		for _, j := range again {
			cmds[j] = eval(ctx, calls[j])
			_ = pipe.Process(ctx, cmds[j])
		}
		if _, err := pipe.Exec(ctx); err != nil && !isReplyError(err) {
			return nil, err
		}
		for _, j := range again {
			v, err := cmds[j].Result()
			if err != nil && !isReplyError(err) {
				return nil, err
			}
			out[j] = result{v, err}
		}
	}
	return out, nil
}

// evalSha returns c's EVALSHA or FCALL command, on c's own arguments (go-redis keeps the slice: no
// copy).
func evalSha(ctx context.Context, c *call) *redis.Cmd {
	cmd := redis.NewCmd(ctx, c.cmd...)
	cmd.SetFirstKeyPos(3) // for a Cluster client: the slot is the first key's
	return cmd
}

// eval returns c's command as EVAL of the script's source, for a Redis that does not know it.
func eval(ctx context.Context, c *call) *redis.Cmd {
	args := slices.Clone(c.cmd)
	args[0], args[1] = "eval", c.script.src
	cmd := redis.NewCmd(ctx, args...)
	cmd.SetFirstKeyPos(3)
	return cmd
}

// runAsScript reports whether c, answered err, is to run again by EVAL of its script: Redis did not
// know the script (EVALSHA's NOSCRIPT) or the function (FCALL's "Function not found"), refused
// the function for want of memory, or forbids calling it (an ACL without FCALL, which turns FCALL
// off for good). A missing function turns FCALL off until the heartbeat has loaded the library
// again (Redis lost it: a restart without its data, or FUNCTION FLUSH). Redis
// refuses to start a function that may write while it is over maxmemory (noeviction), where a
// script starts, reads and fails only when it writes: the script decides a denial (which writes
// nothing) as before, and an admission fails as before, decided by the policy; run as a function,
// every decision went to the policy (fail-open admitted what Redis would have denied).
func (s *Store) runAsScript(c *call, err error) bool {
	if err == nil {
		return false
	}
	if redis.HasErrorPrefix(err, "Function not found") {
		s.fcall.Store(false)
		s.libraryLost.Store(true)
		return true
	}
	if c.cmd[0] == "fcall" && redis.HasErrorPrefix(err, "OOM") {
		return true
	}
	if c.cmd[0] == "fcall" && redis.HasErrorPrefix(err, "NOPERM") {
		// An ACL that let the library load but forbids calling it: the scripts, for good.
		s.fcall.Store(false)
		return true
	}
	return redis.HasErrorPrefix(err, "NOSCRIPT")
}

// isReplyError reports whether err is an error reply from Redis (the round trip worked), as
// opposed to a failure to get a reply.
func isReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// isTimeout reports whether err is a missed deadline: the context's, or a connection's (a client
// with ContextTimeoutEnabled sets the connection's deadline from the context, and the two may
// fire in either order).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// refused reports whether err is a failure to connect: nobody listens at Redis's address.
func refused(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}
