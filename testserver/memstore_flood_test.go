package testserver

import (
	"strconv"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodAddr is the i-th flooding client's address, distinct from victimAddr for every i < 1<<24.
func floodAddr(i int) string {
	return "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255) + ":1"
}

const victimAddr = "192.0.2.1:1"

// TestFloodKeepsThrottledKey is the scenario: a key spends its 5 requests per hour, then
// 150,000 other keys arrive within the hour (more than the default cap of 100,000 states). The key
// must get no more admissions that hour, however many times it asks, and its quota is back when
// the window ends.
func TestFloodKeepsThrottledKey(t *testing.T) {
	const flood = 150_000
	clk := newFakeClock()
	start := time.Unix(1_700_000_000, 0).Truncate(time.Hour).Add(time.Hour) // an hour's first instant
	clk.t = start
	l := mustLimiter([]Rule{{Name: "per-ip", Key: KeyIP, Algorithm: "fixed-window", Limit: 5, Window: time.Hour}},
		WithClock(clk.Now), WithStatsKeys(0))
	defer l.Close()
	decide := func(addr string) Result {
		t.Helper()
		res, err := l.Decide(req("GET", "/", addr))
		require.NoError(t, err)
		return res
	}
	for i := range 5 {
		require.True(t, decide(victimAddr).Allowed, "request %d of 5", i+1)
	}
	require.False(t, decide(victimAddr).Allowed)

	// The flood is spread over 50 minutes; the victim asks again every 1,000 flooding keys.
	step := 50 * time.Minute / flood
	victimAdmitted, floodAdmitted := 0, 0
	for i := range flood {
		clk.Advance(step)
		if decide(floodAddr(i)).Allowed {
			floodAdmitted++
		}
		if i%1000 == 999 && decide(victimAddr).Allowed {
			victimAdmitted++
		}
	}
	st := l.Stats()
	t.Logf("flood of %d keys: %d tracked, %d evictions, %d decided on the overflow state, %d flooding requests admitted",
		flood, st.Store.Keys, st.Store.Evictions, st.Store.Overflowed, floodAdmitted)
	assert.Zero(t, victimAdmitted, "the throttled key got admissions in the same hour")
	assert.Zero(t, st.Store.Evictions, "every tracked key is busy until the hour ends")
	assert.Positive(t, st.Store.Overflowed)
	assert.Equal(t, int64(flood)+1-int64(st.Store.Keys), st.Store.Overflowed, "every untracked flooding key was counted")
	assert.Equal(t, st.Store.Keys-1+5, floodAdmitted, "tracked flooding keys once each, the overflow state its 5")

	// A new legitimate key is untracked too while the store is full of busy keys, so it shares the
	// spent overflow quota: it is denied until the hour ends (the documented price).
	assert.False(t, decide("198.51.100.7:1").Allowed)

	clk.t = start.Add(time.Hour)
	assert.True(t, decide(victimAddr).Allowed, "the victim's quota is back with the next window")
	assert.True(t, decide("198.51.100.7:1").Allowed, "idle states make room for new keys again")
	assert.Positive(t, l.Stats().Store.Evictions)
}

// TestFloodChangesNoTrackedDecision runs every algorithm: a tracked key's decisions while a flood
// of new keys overfills the store are exactly the decisions its algorithm makes on its own state
// without any flood (a reference State fed the same requests). The flood stays inside one window
// so that the key, which spent its quota first, is never idle (an idle key may be forgotten, and
// that changes nothing either, but it is another guarantee).
func TestFloodChangesNoTrackedDecision(t *testing.T) {
	const (
		maxKeys = 1_000
		flood   = 5 * maxKeys
		limit   = 5
		window  = time.Hour
	)
	for _, name := range algorithm.Names() {
		t.Run(name, func(t *testing.T) {
			clk := newFakeClock()
			clk.t = clk.t.Truncate(window) // a window's first instant
			l := mustLimiter([]Rule{{Name: "per-ip", Key: KeyIP, Algorithm: name, Limit: limit, Window: window}},
				WithClock(clk.Now), WithMaxKeys(maxKeys), WithStatsKeys(0))
			defer l.Close()
			ref := mustAlg(t, name, limit, window)
			var refState algorithm.State
			victim := func() {
				t.Helper()
				now := clk.Now()
				res, err := l.Decide(req("GET", "/", victimAddr))
				require.NoError(t, err)
				want := ref.Decide(&refState, now, 1)
				if want.Allowed {
					ref.Commit(&refState, now, 1)
				}
				require.False(t, ref.Idle(&refState, now), "the victim went idle: the test no longer tests tracking")
				require.Equal(t, want.Allowed, res.Allowed, "victim at %v", now)
				require.Equal(t, want.Remaining, res.Rules[0].Remaining)
			}
			for range limit + 1 {
				victim()
			}
			step := 9 * window / 10 / flood
			for i := range flood {
				clk.Advance(step)
				_, err := l.Decide(req("GET", "/", floodAddr(i)))
				require.NoError(t, err)
				if i%50 == 49 {
					victim()
				}
			}
			st := l.Stats().Store
			t.Logf("%s: %d tracked, %d evictions, %d overflowed", name, st.Keys, st.Evictions, st.Overflowed)
			assert.LessOrEqual(t, st.Keys, maxKeys)
			assert.Positive(t, st.Overflowed, "the flood overfilled the store")
			assert.Zero(t, st.EvictedActive)
		})
	}
}
