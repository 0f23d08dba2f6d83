package anchoredclock

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClockWallInBubble checks that inside a synctest bubble the default clock is the bubble's
// time.Now exactly, across waits shorter and longer than Period, whether its anchor was
// read inside the bubble or outside it.
func TestClockWallInBubble(t *testing.T) {
	outside := new(Clock)
	outside.Wall() // anchored on the real clock, with a monotonic reading
	synctest.Test(t, func(t *testing.T) {
		inside := new(Clock)
		for _, wait := range []time.Duration{0, time.Nanosecond, 999 * time.Millisecond, Period, 3 * time.Second, 1234567 * time.Nanosecond} {
			time.Sleep(wait)
			want := time.Now()
			assert.True(t, want.Equal(inside.Wall()), "after %v", wait)
			assert.True(t, want.Equal(outside.Wall()), "after %v, anchored outside the bubble", wait)
		}
	})
}

// TestClockWallFollowsWallClock checks on the real clock that readings stay with time.Now's wall
// reading and never go backwards between two anchors: from a fresh clock, from an anchor whose
// nanoseconds are about to carry into the next second, and from an anchor older than
// Period, which must be replaced. The bound is generous (a millisecond) because it only has
// to catch an anchor misused, such as a wrong unit or a missed carry, which would be off by up to
// a second; the clock's own error is the few nanoseconds between time.Now's two reads.
func TestClockWallFollowsWallClock(t *testing.T) {
	now := time.Now()
	carrying := now.Add(-time.Duration(now.Nanosecond()) - time.Microsecond) // x.999999000
	for name, anchor := range map[string]*anchor{
		"fresh":    nil,
		"carrying": anchorAt(carrying),
		"stale":    anchorAt(now.Add(-2 * Period)),
	} {
		t.Run(name, func(t *testing.T) {
			c := new(Clock)
			c.anchor.Store(anchor)
			checkFollowsWallClock(t, c)
		})
	}
}

func checkFollowsWallClock(t *testing.T, c *Clock) {
	const slack = int64(time.Millisecond)
	prev := c.Wall()
	for range 20_000 {
		before := time.Now().UnixNano()
		got := c.Wall()
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

// TestClockNowReadsThePresent: a reading of Now lies between two readings of time.Now taken around
// it, by the monotonic clock and by the wall clock alike, from a fresh clock and from its anchor.
func TestClockNowReadsThePresent(t *testing.T) {
	var c Clock
	for i := range 3 {
		before := time.Now()
		got := c.Now()
		after := time.Now()
		assert.False(t, got.Before(before) || got.After(after), "reading %d: %v not within [%v, %v] by the monotonic clock", i, got, before, after)
		wall := got.Round(0)
		assert.False(t, wall.Before(before.Round(0)) || wall.After(after.Round(0)), "reading %d: wall %v not within [%v, %v]", i, wall, before.Round(0), after.Round(0))
	}
}

// TestClockReanchors: an anchor older than Period is replaced by a fresh reading of the wall clock,
// so that a step of the wall clock shows in the readings within Period; a fresh one is kept.
func TestClockReanchors(t *testing.T) {
	var c Clock
	stale := anchorAt(time.Now().Add(-Period - time.Millisecond))
	c.anchor.Store(stale)
	c.Now()
	fresh := c.anchor.Load()
	require.NotSame(t, stale, fresh, "a stale anchor was kept")
	c.Now()
	c.Wall()
	assert.Same(t, fresh, c.anchor.Load(), "a fresh anchor was replaced")
}

// TestClockNowInBubble: inside a synctest bubble Now is the bubble's time.Now exactly, whether the
// anchor was read inside the bubble or outside it.
func TestClockNowInBubble(t *testing.T) {
	outside := new(Clock)
	outside.Now()
	synctest.Test(t, func(t *testing.T) {
		inside := new(Clock)
		for _, wait := range []time.Duration{0, time.Nanosecond, 999 * time.Millisecond, Period, 3 * time.Second} {
			time.Sleep(wait)
			want := time.Now()
			assert.True(t, want.Equal(inside.Now()), "after %v", wait)
			assert.True(t, want.Equal(outside.Now()), "after %v, anchored outside the bubble", wait)
		}
	})
}
