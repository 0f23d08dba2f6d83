package algorithm

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestNanos checks nanos against its definition, t.UnixNano() clamped to [0, math.MaxInt64], at
// the bounds of the clamp and on either side of them.
func TestNanos(t *testing.T) {
	epoch, last := time.Unix(0, 0), time.Unix(0, math.MaxInt64)
	want := func(t time.Time) int64 {
		switch {
		case t.Before(epoch):
			return 0
		case t.After(last):
			return math.MaxInt64
		}
		return t.UnixNano()
	}
	times := []time.Time{
		{}, epoch.Add(-time.Second), epoch.Add(-1), epoch, epoch.Add(1), t0, time.Unix(1<<40, 0),
		last.Add(-time.Second), last.Add(-1), last, last.Add(1), last.Add(time.Second),
		time.Unix(math.MaxInt64/int64(time.Second), 999_999_999), time.Unix(1<<62, 0), time.Unix(-1<<62, 0),
		t0.In(time.FixedZone("x", 3600)),
	}
	for _, tm := range times {
		assert.Equal(t, want(tm), nanos(tm), "%v", tm)
	}
}
