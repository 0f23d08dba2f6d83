// Package throttle paces requests on the client side, before they reach a rate-limited server.
//
// A Limiter paces one key (by default one host and credential: the host and a hash of the
// Authorization header; a route whose responses name its quota's bucket moves to the bucket's key,
// see BucketKey). Five are built in: NewTokenBucket (rate and
// burst, on golang.org/x/time/rate), NewLeakyBucket (an even spacing of 1/rate with a bounded FIFO
// backlog), NewWindowQuota (a quota of requests per window used exactly: bursts of the whole quota,
// never more than it in any window), NewWindowCounter (a server's sliding window counter on
// epoch-aligned windows, mirrored exactly); package throttle/learn adds a limiter that learns the
// server's limit from its responses. A Throttle keeps one Limiter per key, created on first use by
// a factory, in a bounded set of partitions, and can pause a key until a point in time. NewTransport applies a Throttle to
// every attempt that passes through an http.RoundTripper and feeds every outcome back: a response
// carrying Retry-After pauses its whole key, and a Limiter that implements Learner observes each
// response (the hook for limiters that learn the server's rate).
//
// Explicit time is the primitive, as in golang.org/x/time/rate: a Limiter takes the current time
// as a parameter (Reserve(now)) and Wait is the blocking shorthand on top of it, which checks its
// context first, refuses up front when the predicted wait passes the context's deadline, and gives
// back what it reserved when the context ends.
//
// The package starts no goroutines; nothing needs to be closed.
package throttle

import (
	"net/http"
	"time"
)

// Limiter paces the requests of one key.
//
// Reserve books one request at now and returns its Reservation, or an error when the limiter
// refuses to book it at all (for example *BacklogFullError from a leaky bucket whose backlog is
// full); on error nothing is booked. The caller then waits until the reservation is due
// (Reservation.Delay reaches zero) and sends the request, or gives the reservation back with
// Reservation.Cancel if it will not send it. Wait is the blocking shorthand.
//
// now is the caller's clock; callers pass non-decreasing times for one Limiter (time.Now does).
// Implementations must be safe for concurrent use. A Limiter may also implement Learner to adjust
// its pace from the outcomes of the requests it let through.
type Limiter interface {
	Reserve(now time.Time) (Reservation, error)
}

// CostReserver is a Limiter that weighs requests: ReserveN books one request that costs cost units
// of the key's quota (tokens of an LLM API, points of a GraphQL API), as Reserve books one of cost
// 1. The Throttle calls it, instead of Reserve, for a request whose context carries a cost
// (request.WithCost); a Limiter that does not implement it counts every request as one. cost is at
// least 1. It must be safe for concurrent use.
type CostReserver interface {
	Limiter
	ReserveN(now time.Time, cost int64) (Reservation, error)
}

// Reservation is one request booked with a Limiter. Its methods are safe for concurrent use.
type Reservation interface {
	// Delay reports how long after now the request must wait before it is sent; zero means it may
	// go now. A reservation's time can move (earlier when a reservation ahead of it is cancelled,
	// or either way when an adaptive limiter changes its pace); Changed announces such moves.
	Delay(now time.Time) time.Duration
	// Changed returns a channel that is closed when the reservation's time moves, after which
	// Changed returns a fresh channel. A reservation whose time never moves returns nil (a nil
	// channel never fires in a select). Call Changed before Delay so no move is missed.
	Changed() <-chan struct{}
	// Cancel gives the reservation back at now because its request will not be sent: later
	// reservations may move up and later Reserve calls are served earlier. Cancel is a no-op once
	// the reservation is due (Delay(now) == 0: the request counts as sent) and on a second call.
	// After Cancel the reservation must not be waited on.
	Cancel(now time.Time)
}

// Learner is implemented by a Limiter that adjusts its pace from what the server answers. The
// Transport calls Observe once for every attempt it passed to the next RoundTripper, with the
// time the attempt returned and its outcome: resp is the response (its body not yet read) when
// err is nil, and nil with the transport error otherwise, or with ErrOtherBucket when the
// response is of another quota than the one this limiter learns (no evidence; not a failure). Observe must not read or close the body
// and must be safe for concurrent use. Attempts that the Throttle refused are not observed. By the
// time Observe runs, a Retry-After on the response has already paused the key (Retry-After wins).
type Learner interface {
	Observe(now time.Time, resp *http.Response, err error)
}

// LatenessLearner is a Limiter that wants to know how late the waiters of its reservations wake:
// a waiter that slept until its reservation's time and woke late (a busy scheduler, a stalled
// process) sends late, and the requests behind it, due on time, follow it closer than the pace.
// The Throttle and Wait call ObserveLateness once for each such wait, with the time the waiter woke
// (its request goes then) and how long after the reservation's time that was (at least 0), before
// the request goes. It must be safe for concurrent use.
type LatenessLearner interface {
	ObserveLateness(now time.Time, late time.Duration)
}

// ServerRater is a Learner whose pace can be slower than the rate the server allows its key: one
// that leaves a share of a quota the server declared to other clients on the key (the learning
// limiter of package throttle/learn). ServerRate reports the rate, in requests per second, that it
// believes the server allows the key, before that share; 0 when it believes none. WithMaxWait
// judges a learned pace by it, not by Rate: a share is the limiter's guess of other clients, no
// wait the server asked for. It must be safe for concurrent use.
type ServerRater interface {
	ServerRate() float64
}

// Resumer is a Limiter that holds requests back on its own while a server's Retry-After runs (the
// learning limiter of package throttle/learn): Throttle.Resume ends that hold as well as the key's
// pause. It must be safe for concurrent use.
type Resumer interface {
	Resume(now time.Time)
}

// HeldReservation is a Reservation that can tell why it waits: Held reports whether its time is
// set by a hold or a window the server's limit asked for (a quota it said is spent, a window of
// sends at its limit), not by the pace and the requests in line ahead of it. The Throttle bounds a
// held reservation's wait by its max wait, as it bounds a Retry-After pause: an interactive client
// fails such a request at once with ErrWaitTooLong rather than waiting out an hour's window.
// Held must be safe for concurrent use.
type HeldReservation interface {
	Reservation
	Held() bool
}

// AttemptLearner is a Learner that also wants to know when each attempt left, to measure the
// round trip and to tell which requests the server had seen when it answered. When the key's
// Limiter implements it, the Transport reads the clock just before passing the attempt on and calls
// ObserveAttempt instead of Observe, with the same contract.
type AttemptLearner interface {
	Learner
	ObserveAttempt(sent, now time.Time, resp *http.Response, err error)
}

// dueReservation is a reservation that was due when it was made. It never moves and cannot be
// given back, so limiters return it without allocating.
type dueReservation struct{}

func (dueReservation) Delay(time.Time) time.Duration { return 0 }
func (dueReservation) Changed() <-chan struct{}      { return nil }
func (dueReservation) Cancel(time.Time)              {}
