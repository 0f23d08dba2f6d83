package learn

import (
	"testing"
	"time"
)

// SetDebug routes the declared strategy's per-answer trace to f (nil: off). Tests only.
func SetDebug(f func(string)) { debugDeclared = f }

// learnerWith returns a new Learner with default options and its strategy of type *T, whose state a
// test sets directly.
func learnerWith[T any](t *testing.T) (*Learner, *T) {
	t.Helper()
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.strats {
		if x, ok := any(s).(*T); ok {
			return l, x
		}
	}
	t.Fatalf("the Learner has no %T strategy", new(T))
	return nil, nil
}

// sec converts seconds to the learner's integer clock (nanoseconds).
func sec(s float64) int64 { return int64(s * float64(time.Second)) }
