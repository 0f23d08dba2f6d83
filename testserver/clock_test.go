package testserver

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSystemClockInBubble checks that inside a synctest bubble the default clock is the bubble's
// time.Now exactly, across waits shorter and longer than anchorPeriod, whether its anchor was
// read inside the bubble or outside it.
func TestSystemClockInBubble(t *testing.T) {
	outside := new(systemClock)
	outside.now() // anchored on the real clock, with a monotonic reading
	synctest.Test(t, func(t *testing.T) {
		inside := new(systemClock)
		for _, wait := range []time.Duration{0, time.Nanosecond, 999 * time.Millisecond, anchorPeriod, 3 * time.Second, 1234567 * time.Nanosecond} {
			time.Sleep(wait)
			want := time.Now()
			assert.True(t, want.Equal(inside.now()), "after %v", wait)
			assert.True(t, want.Equal(outside.now()), "after %v, anchored outside the bubble", wait)
		}
	})
}

// TestSystemClockFollowsWallClock checks on the real clock that readings stay with time.Now's wall
// reading and never go backwards between two anchors: from a fresh clock, from an anchor whose
// nanoseconds are about to carry into the next second, and from an anchor older than
// anchorPeriod, which must be replaced. The bound is generous (a millisecond) because it only has
// to catch an anchor misused, such as a wrong unit or a missed carry, which would be off by up to
// a second; the clock's own error is the few nanoseconds between time.Now's two reads.
func TestSystemClockFollowsWallClock(t *testing.T) {
	now := time.Now()
	carrying := now.Add(-time.Duration(now.Nanosecond()) - time.Microsecond) // x.999999000
	for name, anchor := range map[string]*clockAnchor{
		"fresh":    nil,
		"carrying": anchorAt(carrying),
		"stale":    anchorAt(now.Add(-2 * anchorPeriod)),
	} {
		t.Run(name, func(t *testing.T) {
			c := new(systemClock)
			c.anchor.Store(anchor)
			checkFollowsWallClock(t, c)
		})
	}
}

func checkFollowsWallClock(t *testing.T, c *systemClock) {
	const slack = int64(time.Millisecond)
	prev := c.now()
	for range 20_000 {
		before := time.Now().UnixNano()
		got := c.now()
		after := time.Now().UnixNano()
		require.GreaterOrEqual(t, got.UnixNano(), before-slack)
		require.LessOrEqual(t, got.UnixNano(), after+slack)
		if got.Before(prev) {
			// Only a re-anchor can step back, and only by time.Now's own jitter.
			require.Less(t, prev.Sub(got), time.Duration(slack))
		}
		prev = got
	}
}
