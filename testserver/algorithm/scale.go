package algorithm

import (
	"fmt"
	"math/bits"
)

// Scale returns an algorithm of the same kind and Window as a with quota limit instead of a.Limit().
// A bucket's burst is scaled in proportion, rounded down, and at least 1; the window algorithms'
// burst is their limit.
//
// The scaled algorithm and a decide on the same States: a State written by either is valid for the
// other and means the same thing to both, namely the requests admitted and not yet forgotten (a
// bucket's deficit in requests, a window's counts, the log's timestamps), each algorithm judging
// them against its own quota. The testserver's elastic mode uses this to decide a key against its
// base limit and, while the server has spare capacity, against a higher ceiling on the same State.
//
// A limit below 1 gives an error matching ErrInvalidLimit; an a not created by this package gives
// one matching ErrUnknownAlgorithm.
func Scale(a Algorithm, limit int64) (Algorithm, error) {
	if limit < 1 {
		return nil, fmt.Errorf("scale: limit %d: %w", limit, ErrInvalidLimit)
	}
	switch a := a.(type) {
	case *tokenBucket:
		return &tokenBucket{a.scaled(limit)}, nil
	case *leakyBucket:
		return &leakyBucket{a.scaled(limit)}, nil
	case *fixedWindow:
		return &fixedWindow{params{limit: limit, window: a.window, burst: limit}}, nil
	case *slidingLog:
		return &slidingLog{params{limit: limit, window: a.window, burst: limit}}, nil
	case *slidingWindow:
		return &slidingWindow{params{limit: limit, window: a.window, burst: limit}}, nil
	}
	return nil, fmt.Errorf("scale: %T: %w", a, ErrUnknownAlgorithm)
}

// scaled returns b's parameters with quota limit and the burst scaled in proportion:
// max(1, floor(burst*limit/b.limit)), computed exactly.
func (b *bucket) scaled(limit int64) bucket {
	hi, lo := bits.Mul64(uint64(b.burst), uint64(limit))
	burst := u128{hi, lo}.div(b.limit)
	return bucket{params{limit: limit, window: b.window, burst: max(burst, 1)}}
}
