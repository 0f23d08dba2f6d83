package queue

// Stats is a snapshot of a Queue's figures, taken at one instant under the queue's lock, so the
// figures are consistent with each other.
type Stats struct {
	// Waiting is the number of requests in the waiting line now.
	Waiting int
	// InFlight is the number of requests holding a place now.
	InFlight int
	// Admitted counts the requests that were given a place since New.
	Admitted uint64
	// Refused counts the requests turned away without a place: ErrQueueFull, or ErrClosed (also the
	// waiters woken by Close).
	Refused uint64
	// Cancelled counts the requests whose context ended while they waited in line (including one that
	// was granted a place at the same moment and passed it on). Requests whose context had already
	// ended when they arrived never enter the queue and are not counted.
	Cancelled uint64
}
