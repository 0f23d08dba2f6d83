package breaker

import "time"

// numBuckets is the number of buckets of the sliding window: the window slides by a tenth of its
// length, so an outcome is forgotten between 0.9 and 1 window after it was recorded.
const numBuckets = 10

// window counts outcomes over the last length of time, in numBuckets buckets. Its zero value is
// empty. It is not safe for concurrent use (its circuit's lock guards it).
type window struct {
	width              time.Duration // length / numBuckets
	buckets            [numBuckets]bucket
	last               int64 // index (in widths since the Unix epoch) of the newest bucket
	requests, failures int   // sums over the buckets
}

type bucket struct{ requests, failures int }

func newWindow(length time.Duration) window {
	return window{width: max(length/numBuckets, 1)}
}

// advance drops the buckets that fell out of the window at now.
func (w *window) advance(now time.Time) {
	idx := now.UnixNano() / int64(w.width)
	if idx <= w.last {
		return
	}
	if idx-w.last >= numBuckets {
		w.reset()
	} else {
		for i := w.last + 1; i <= idx; i++ {
			b := &w.buckets[i%numBuckets]
			w.requests -= b.requests
			w.failures -= b.failures
			*b = bucket{}
		}
	}
	w.last = idx
}

// add records one outcome at now.
func (w *window) add(now time.Time, failed bool) {
	w.advance(now)
	b := &w.buckets[w.last%numBuckets]
	b.requests++
	w.requests++
	if failed {
		b.failures++
		w.failures++
	}
}

// reset empties the window.
func (w *window) reset() {
	w.buckets = [numBuckets]bucket{}
	w.requests, w.failures = 0, 0
}
