package redisthrottle

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// This file is a deterministic discrete-event simulation of client processes sharing one quota
// through real Redis scripts, in explicit time: every Reserve and Observe gets the simulated
// instant (the scripts use it instead of Redis TIME), so a run takes no real time beyond its Redis
// round trips and gives the same result every time. The server decides with the real testserver
// algorithms and writes the real headers; each process emulates the Throttle in front of its
// limiter (a Retry-After pauses the process's key; a reservation still waiting when a pause
// arrives is given back and taken again after the pause), and its workers retry throttled
// requests (every attempt reserves, as under the retry layer).

// simConfig describes one simulated run.
type simConfig struct {
	alg       string
	limit     int64
	window    time.Duration
	burst     int64
	headers   bool
	processes int
	workers   int // per process
	n         int // logical requests in total
	rtt       time.Duration
	jitter    time.Duration // each way is late by up to jitter
	seed      uint64        // varies the jitter's random sequence
	opts      []Option
	// changeAt, when set, makes the server enforce changeLimit from that offset on.
	changeAt    time.Duration
	changeLimit int64
}

// simResult is what a run measured.
type simResult struct {
	elapsed   time.Duration // start to the last success
	attempts  int
	throttled int
	admitted  int
	lost      int // logical requests not done
	rates     []float64
}

// ratio is elapsed over the physical limit: the time the server needs for n requests after its
// initial burst.
func (r simResult) ratio(c simConfig) float64 {
	rate := float64(c.limit) / c.window.Seconds()
	ideal := float64(int64(c.n)-c.burst) / rate
	return r.elapsed.Seconds() / ideal
}

func (r simResult) share() float64 { return float64(r.throttled) / float64(r.attempts) }

type simEvent struct {
	at      time.Time
	seq     int
	kind    int // evReady, evSend, evArrive, evResponse
	w       *simWorker
	resp    *http.Response
	version int // for evSend: the worker's wait it belongs to (a stale one is skipped)
}

const (
	evReady = iota
	evSend
	evArrive
	evResponse
)

type simQueue []*simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(*simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type simProcess struct {
	l       *Limiter
	pause   time.Time
	waiting map[*simWorker]bool // workers waiting for their reservation
	gen     *paceGen            // the pace generation the waiting ones were last scheduled in
}

type simWorker struct {
	p          *simProcess
	res        simReservation
	reservedAt time.Time
	sentAt     time.Time
	version    int
}

type simReservation interface {
	Delay(time.Time) time.Duration
	Cancel(time.Time)
}

// simTrace, when set, is told of events (debugging).
var simTrace func(at time.Duration, what string, rate float64)

// runSim runs one simulation on the Redis at url under key.
func runSim(t *testing.T, url, key string, c simConfig) simResult {
	t.Helper()
	burst := c.burst
	if burst == 0 {
		burst = c.limit
	}
	alg, err := algorithm.New(c.alg, algorithm.Config{Limit: c.limit, Window: c.window, Burst: burst})
	if err != nil {
		t.Fatal(err)
	}
	alg2 := alg
	if c.changeAt > 0 {
		if alg2, err = algorithm.Scale(alg, c.changeLimit); err != nil {
			t.Fatal(err)
		}
	}
	start := epoch
	rng := rand.New(rand.NewPCG(7+c.seed, 11))
	oneWay := func() time.Duration {
		d := c.rtt / 2
		if c.jitter > 0 {
			d += time.Duration(rng.Int64N(int64(c.jitter)))
		}
		return d
	}
	var q simQueue
	seq := 0
	push := func(at time.Time, kind int, w *simWorker, resp *http.Response) {
		seq++
		e := &simEvent{at: at, seq: seq, kind: kind, w: w, resp: resp}
		if kind == evSend {
			w.version++
			e.version = w.version
		}
		heap.Push(&q, e)
	}
	// follow re-schedules the waiting workers of p when its pace changed (what Throttle.Wait does
	// on Reservation.Changed).
	follow := func(p *simProcess, now time.Time) {
		if g := p.l.pace.Load(); g != p.gen {
			p.gen = g
			for w := range p.waiting {
				push(now.Add(w.res.Delay(now)), evSend, w, nil)
			}
		}
	}
	var procs []*simProcess
	for range c.processes {
		rdb := newClient(t, url)
		l := mustNew(t, redis.UniversalClient(rdb), key, c.opts...)
		l.id = fmt.Sprintf("p%d", len(procs))
		procs = append(procs, &simProcess{l: l, waiting: map[*simWorker]bool{}, gen: l.pace.Load()})
	}
	issued := min(c.n, c.processes*c.workers)
	for i := range issued {
		push(start, evReady, &simWorker{p: procs[i%c.processes]}, nil)
	}
	var st algorithm.State
	var r simResult
	done := 0
	var last time.Time
	for q.Len() > 0 {
		e := heap.Pop(&q).(*simEvent)
		w, now := e.w, e.at
		switch e.kind {
		case evReady:
			if w.p.pause.After(now) {
				push(w.p.pause, evReady, w, nil)
				continue
			}
			res, err := w.p.l.Reserve(now)
			if err != nil {
				t.Fatal(err)
			}
			w.res, w.reservedAt = res, now
			w.p.waiting[w] = true
			push(now.Add(res.Delay(now)), evSend, w, nil)
			follow(w.p, now)
		case evSend:
			if e.version != w.version || !w.p.waiting[w] {
				continue // stale: the wait was re-scheduled
			}
			if w.p.pause.After(w.reservedAt) && w.p.pause.After(now) {
				delete(w.p.waiting, w)
				w.res.Cancel(now) // a pause arrived while waiting: give back, wait it out
				push(w.p.pause, evReady, w, nil)
				continue
			}
			if d := w.res.Delay(now); d > 0 {
				push(now.Add(d), evSend, w, nil) // moved later
				continue
			}
			delete(w.p.waiting, w)
			w.sentAt = now
			push(now.Add(oneWay()), evArrive, w, nil)
		case evArrive:
			a := alg
			if c.changeAt > 0 && now.Sub(start) >= c.changeAt {
				a = alg2
			}
			d := a.Decide(&st, now, 1)
			if simTrace != nil {
				pi := 0
				for i, p := range procs {
					if p == w.p {
						pi = i
					}
				}
				simTrace(now.Sub(start), fmt.Sprintf("arrive p%d booked %.6f sent %.6f", pi, w.reservedAt.Sub(start).Seconds(), w.sentAt.Sub(start).Seconds()), float64(r.admitted))
			}
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}}
			if d.Allowed {
				a.Commit(&st, now, 1)
				r.admitted++
			} else {
				resp.StatusCode = http.StatusTooManyRequests
			}
			if c.headers {
				ratelimitheader.Write(resp.Header, ratelimitheader.Fields{
					Limit: d.Limit, Window: a.Window(), Remaining: d.Remaining, Reset: d.ResetAfter, RetryAfter: d.RetryAfter,
				})
			}
			push(now.Add(oneWay()), evResponse, w, resp)
		case evResponse:
			r.attempts++
			cuts := w.p.l.Stats().Cuts
			w.p.l.ObserveAttempt(w.sentAt, now, e.resp, nil)
			follow(w.p, now)
			if simTrace != nil && w.p.l.Stats().Cuts != cuts {
				simTrace(now.Sub(start), "cut", w.p.l.Rate())
			}
			if e.resp.StatusCode != http.StatusOK {
				if simTrace != nil {
					simTrace(now.Sub(start), "429", w.p.l.Rate())
				}
				r.throttled++
				if ra, ok := ratelimitheader.RetryAfter(e.resp.Header, now); ok && now.Add(ra).After(w.p.pause) {
					w.p.pause = now.Add(ra)
				}
				push(now, evReady, w, nil) // retry the same request
				continue
			}
			done++
			if simTrace != nil && done%100 == 0 {
				simTrace(now.Sub(start), "done", w.p.l.Rate())
			}
			last = now
			if issued < c.n {
				issued++
				push(now, evReady, w, nil)
			}
		}
	}
	r.elapsed = last.Sub(start)
	r.lost = c.n - done
	for _, p := range procs {
		r.rates = append(r.rates, p.l.Rate())
	}
	return r
}
