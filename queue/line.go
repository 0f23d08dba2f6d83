package queue

// waiterState is where a waiter stands. It is written under Queue.mu, always before ready is closed.
type waiterState uint8

const (
	stateWaiting waiterState = iota // in its line
	stateGranted                    // given a place; removed from its line
	stateClosed                     // woken by Close; removed from its line
)

// waiter is one request waiting for a place. It is linked into the line of its class.
type waiter struct {
	prev, next *waiter
	ready      chan struct{} // closed when state leaves stateWaiting
	state      waiterState
	class      int
}

// line is a FIFO of waiters: an intrusive doubly linked list, so that a cancelled waiter leaves from
// any position in O(1) without allocating. It is guarded by Queue.mu.
type line struct {
	head, tail *waiter
	n          int
}

// push appends w at the back.
func (l *line) push(w *waiter) {
	w.prev, w.next = l.tail, nil
	if l.tail == nil {
		l.head = w
	} else {
		l.tail.next = w
	}
	l.tail = w
	l.n++
}

// remove unlinks w, which must be in l.
func (l *line) remove(w *waiter) {
	if w.prev == nil {
		l.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		l.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
	l.n--
}

// pop removes and returns the oldest waiter, or nil when l is empty.
func (l *line) pop() *waiter {
	w := l.head
	if w != nil {
		l.remove(w)
	}
	return w
}
