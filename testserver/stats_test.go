package testserver

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatsSumStripes decides, from several goroutines at once, for many keys (so that the
// decisions spread over every counter stripe) under two rules that a request matches together
// (so that some admissions are blocked by the other rule), and checks that the snapshot's counters
// add up exactly: per rule, per key, and the untracked keys, with no per-key table, a small one
// and a large one.
func TestStatsSumStripes(t *testing.T) {
	const (
		keys       = 200
		perKey     = 5 // requests per key; the per-ip rule admits 3 of them
		goroutines = 4
	)
	for _, statsKeys := range []int{0, 10, keys} {
		t.Run("stats-keys="+strconv.Itoa(statsKeys), func(t *testing.T) {
			clock := newFakeClock()
			l := mustLimiter([]Rule{
				{Name: "per-ip", Key: KeyIP, Algorithm: "fixed-window", Limit: 3, Window: time.Hour},
				// Admits 4 of a key's 5 and so never denies: per-ip's denials of the 4th and 5th
				// are admissions blocked by another rule for it.
				{Name: "gate", Key: KeyIP, Algorithm: "fixed-window", Limit: 4, Window: time.Hour, Mode: ModeShadow},
			}, WithClock(clock.Now), WithStatsKeys(statsKeys))
			defer l.Close()
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for k := g; k < keys; k += goroutines {
						addr := "10.0." + strconv.Itoa(k/256) + "." + strconv.Itoa(k%256) + ":1"
						for range perKey {
							_, err := l.Decide(req("GET", "/", addr))
							assert.NoError(t, err)
						}
					}
				})
			}
			wg.Wait()
			st := l.Stats()
			// per-ip admits 3 of each key's 5 and denies 2, which the gate counts as blocked.
			assert.Equal(t, Counters{Allowed: 3 * keys, Denied: 2 * keys}, st.Rules["per-ip"])
			assert.Equal(t, Counters{Allowed: 3 * keys, Blocked: 2 * keys}, st.Rules["gate"])
			// The per-key table holds (rule, key) pairs, each from its first decision on.
			tracked := len(st.Keys["per-ip"]) + len(st.Keys["gate"])
			require.Equal(t, min(statsKeys, 2*keys), tracked)
			for key, c := range st.Keys["per-ip"] {
				assert.Equal(t, Counters{Allowed: 3, Denied: 2}, c, key)
			}
			for key, c := range st.Keys["gate"] {
				assert.Equal(t, Counters{Allowed: 3, Blocked: 2}, c, key)
			}
			assert.Equal(t, int64(perKey*(2*keys-tracked)), st.UntrackedKeys, "each untracked pair's 5 decisions")
		})
	}
}

// TestStatsDecideKey checks DecideKey's counts, which pick their counter stripe from the store's
// hash of the key, the same way.
func TestStatsDecideKey(t *testing.T) {
	clock := newFakeClock()
	l := mustLimiter([]Rule{{Name: "r", Algorithm: "token-bucket", Limit: 2, Window: time.Hour}},
		WithClock(clock.Now), WithStatsKeys(0))
	defer l.Close()
	for k := range 100 {
		for range 3 {
			_, err := l.DecideKey(context.Background(), "r", "key-"+strconv.Itoa(k))
			require.NoError(t, err)
		}
	}
	st := l.Stats()
	assert.Equal(t, Counters{Allowed: 200, Denied: 100}, st.Rules["r"])
	assert.Equal(t, int64(300), st.UntrackedKeys)
}
