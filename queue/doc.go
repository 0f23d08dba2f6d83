// Package queue is steady's admission stage: a bounded, context-aware waiting line in front of a
// limited number of requests in flight. It is the outermost layer of the client stack
// (queue -> retry -> throttle -> base), so it counts logical requests, not attempts: a request keeps
// its place through all of its retries and gives it back when its response body is done.
//
// # Order
//
// Waiters are served in strict FIFO order within a priority class. There are three classes, High,
// Normal (the default) and Low, chosen per request with WithPriority on the request's context.
// A free place goes to the oldest waiter of the most important class that has waiters, with one
// exception that keeps lower classes from starving:
//
//	When K places in a row have gone to more important classes while a class had someone waiting,
//	the oldest waiter of that class is served next. If several classes qualify, the least
//	important one goes first.
//
// K is set with WithStarvationLimit (default DefaultStarvationLimit). So the oldest Low waiter is
// admitted after at most K grants to higher classes, and a High request overtakes every Normal and
// Low waiter except for that one bounded exception: while High requests keep arriving, they still get
// at least K of every K+1 places.
//
// # Limits
//
// WithMaxInFlight bounds the places (default DefaultMaxInFlight; 0 means unlimited), WithMaxWaiting
// bounds the line (default DefaultMaxWaiting; 0 means no line at all, so a request either gets a place
// at once or is refused). A request that finds the line full is refused with ErrQueueFull; the bound
// is shared by all classes. A request whose context ends while it waits leaves the line at once and
// returns the context's error; no place is lost, not even when the place was granted at the same
// moment (it passes to the next waiter). The queue cannot predict how long a wait will be, so it does
// not refuse early for a near deadline: it checks the context first and then waits at most until the
// context ends.
//
// # Use
//
// Acquire and its release function serve any kind of work; Transport applies the queue to an
// http.RoundTripper. Stats reports live figures. The queue starts no goroutines; Close refuses new
// requests and wakes every waiter with ErrClosed.
package queue
