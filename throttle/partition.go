package throttle

import (
	"math"
	"sync"
	"sync/atomic"
)

// partition is the state of one key: its limiter and its pause.
type partition struct {
	key string
	// base is the key this is a bucket of (BucketKey(base, bucket)), "" for any other key. It is
	// set when the partition is made, under Throttle.mu.
	base string
	// home is, for a key's own partition (key == base of its buckets), the bucket whose quota its
	// limiter learns: the API's primary one (GitHub's core) when it has one, else the first its
	// answers named. The partition of that bucket shares this one's limiter (see
	// Throttle.acquire). Written once, under Throttle.mu, before any route is mapped to it;
	// homeSet mirrors it being set, for reading without the lock.
	home    string
	homeSet atomic.Bool
	// sharesBase is set on the home bucket's partition, which paces with its key's limiter: a
	// pause of either is a pause of both (the quota is one). Written with lim, before limInit.
	sharesBase bool

	// refs counts the requests waiting or in flight on this partition. Eviction (Throttle.mu held)
	// swaps a count of 0 for evictedRefs, so a partition in use is never evicted; acquire's fast
	// path raises it without the lock and gives the partition up when it finds it evicted.
	refs atomic.Int32
	// pauseUntil is the end of the key's pause in nanoseconds since Throttle.epoch; values not
	// after the current time mean no pause. It is written under mu: Pause only extends it, SetPause
	// and Resume may shorten or clear it.
	pauseUntil atomic.Int64
	// globalUntil is the end of the latest pause of the key's whole host (a throttle of global
	// scope), in the same clock: a bucket partition of this key made during it sits it out too.
	globalUntil atomic.Int64

	mu      sync.Mutex    // guards pauseCh and writes to pauseUntil
	pauseCh chan struct{} // closed when the pause changes; created lazily by waiters

	// Written under Throttle.mu's exclusive lock. lim and learner are written once, before limInit
	// is set, and read by requests after they acquired the partition.
	limInit      atomic.Bool
	lim          Limiter
	learner      Learner
	costs        CostReserver   // lim, when it weighs requests
	attempts     AttemptLearner // learner, when it also wants send times
	newer, older *partition     // the LRU list
}

// pause extends the key's pause to until (nanoseconds since the epoch) and wakes the waiters that
// hold limiter reservations, so that those due before until give them back and hold back too. An
// earlier until is ignored.
func (p *partition) pause(until int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until <= p.pauseUntil.Load() {
		return
	}
	p.pauseUntil.Store(until)
	if p.pauseCh != nil {
		close(p.pauseCh)
		p.pauseCh = nil
	}
}

// setPause sets the key's pause to end at until (nanoseconds since the epoch; 0 or a past instant
// ends it), shorter or longer than before, and wakes every waiter so that it looks again: those
// sitting out the pause leave at the new end, those holding reservations hold back when the pause
// now reaches past them.
func (p *partition) setPause(until int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until == p.pauseUntil.Load() {
		return
	}
	p.pauseUntil.Store(until)
	if p.pauseCh != nil {
		close(p.pauseCh)
		p.pauseCh = nil
	}
}

// pauseSignal returns a channel that is closed by the next change of the pause.
func (p *partition) pauseSignal() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pauseCh == nil {
		p.pauseCh = make(chan struct{})
	}
	return p.pauseCh
}

// evictedRefs is the reference count of an evicted partition: far below any count of requests,
// so that a fast-path acquire that raised it sees it evicted.
const evictedRefs = math.MinInt32 / 2

// lru is a doubly linked list of partitions, most recently used first. It is guarded by
// Throttle.mu; head mirrors newest, for reading without the lock.
type lru struct {
	newest, oldest *partition
	head           atomic.Pointer[partition]
}

func (l *lru) pushFront(p *partition) {
	p.older, p.newer = l.newest, nil
	if l.newest != nil {
		l.newest.newer = p
	} else {
		l.oldest = p
	}
	l.newest = p
	l.head.Store(p)
}

func (l *lru) remove(p *partition) {
	if p.newer != nil {
		p.newer.older = p.older
	} else {
		l.newest = p.older
		l.head.Store(p.older)
	}
	if p.older != nil {
		p.older.newer = p.newer
	} else {
		l.oldest = p.newer
	}
	p.newer, p.older = nil, nil
}

func (l *lru) touch(p *partition) {
	if l.newest == p {
		return
	}
	l.remove(p)
	l.pushFront(p)
}
