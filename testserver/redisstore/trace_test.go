package redisstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestTraceMatchesMemory replays the same random trace against a MemoryStore and the Redis store
// (caller clock, microsecond-aligned times) and requires identical decisions, with durations
// compared at the Redis store's microsecond resolution: every algorithm, several quotas (uneven
// rates, bucket bursts, a start at the epoch), every mode's way of building checks (hard, soft's
// scaled limit with a published base, elastic switching between base and ceiling, shadow's
// advisory checks), n > 1 including n above the burst, late callers (time going backwards),
// shaping deadlines (MaxDelay), and requests with a second rule whose denials must commit nothing
// in the first (all-or-nothing), sometimes on the very same state. Each trace is replayed twice:
// through the library's functions (FCALL) and through the scripts (EVALSHA).
func TestTraceMatchesMemory(t *testing.T) {
	url := redistest.URL(t)
	quotas := []struct {
		name   string
		limit  int64
		window time.Duration
		burst  int64 // buckets only
		start  time.Time
	}{
		{"5-per-1s", 5, time.Second, 0, time.UnixMicro(1_700_000_000_123_456)},
		{"7-per-3001us-burst-3", 7, 3001 * time.Microsecond, 3, time.UnixMicro(1_712_345_678_901_234)},
		{"50-per-1h-from-epoch", 50, time.Hour, 0, time.Unix(0, 0)},
		{"3-per-10ms-burst-9", 3, 10 * time.Millisecond, 9, time.UnixMicro(1_750_000_000_000_001)},
	}
	modes := []testserver.Mode{testserver.ModeHard, testserver.ModeSoft, testserver.ModeElastic, testserver.ModeShadow}
	for ai, name := range algorithm.Names() {
		for qi, q := range quotas {
			for mi, mode := range modes {
				for _, scripts := range []bool{false, true} {
					via := map[bool]string{false: "fcall", true: "evalsha"}[scripts]
					t.Run(fmt.Sprintf("%s/%s/%s/%s", name, q.name, mode, via), func(t *testing.T) {
						t.Parallel()
						burst := int64(0)
						if name == algorithm.NameTokenBucket || name == algorithm.NameLeakyBucket {
							burst = q.burst
						}
						base := mustAlg(t, name, q.limit, q.window, burst)
						rng := rand.New(rand.NewPCG(uint64(ai), uint64(qi*10+mi)))
						replayTrace(t, url, rng, base, mode, q.start, 300, scripts)
					})
				}
			}
		}
	}
}

// replayTrace runs n random requests against both stores and compares every decision; the Redis
// store runs its scripts (EVALSHA) when scripts is set, else the library's functions (FCALL).
func replayTrace(t *testing.T, url string, rng *rand.Rand, base algorithm.Algorithm, mode testserver.Mode, start time.Time, n int, scripts bool) {
	t.Helper()
	mem, err := testserver.NewMemoryStore(0)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	// A deadline no loaded test machine misses: a missed one would be decided by policy, which
	// the hook reports as what it is instead of as a wrong decision.
	rs := openStore(t, url, WithCallerClock(), WithTimeout(time.Minute),
		WithErrorHook(func(err error) { t.Errorf("Redis failed: %v", err) }))
	switch {
	case scripts:
		rs.fcall.Store(false) // and it stays off: the library was not lost
	case !rs.fcall.Load():
		t.Skip("this Redis has no functions (before Redis 7): the scripts' replay covers it")
	}

	limit, window, burst := base.Limit(), base.Window(), base.Burst()
	scaled := mustScale(t, base, limit*3/2+1) // soft's enforced limit and elastic's ceiling
	// The second rule: a small fixed-window or token-bucket limit on another key space.
	otherName := []string{algorithm.NameFixedWindow, algorithm.NameTokenBucket, algorithm.NameSlidingLog}[rng.IntN(3)]
	other := mustAlg(t, otherName, 3, window, 0)
	scopeA := fmt.Sprintf("a|%s|%d|%d", base.Name(), limit, window)
	scopeB := fmt.Sprintf("b|%s|%d|%d", other.Name(), 3, window)

	interval := max(window/time.Duration(limit), time.Microsecond)
	now := start
	for i := range n {
		// Time: mostly forward by up to two intervals, sometimes the same instant, sometimes late.
		switch r := rng.IntN(20); {
		case r == 0:
			now = now.Add(-randMicros(rng, interval))
		case r < 3:
		default:
			now = now.Add(randMicros(rng, 2*interval))
		}
		if now.Before(time.Unix(0, 0)) {
			now = time.Unix(0, 0)
		}
		a := testserver.StoreCheck{Rule: "a", Scope: scopeA, Key: fmt.Sprintf("k%d", rng.IntN(3)), N: 1, Algorithm: base}
		if rng.IntN(6) == 0 {
			a.N = 1 + rng.Int64N(burst+1) // up to burst+1: never admitted
		}
		switch mode {
		case testserver.ModeSoft:
			a.Algorithm, a.Publish = scaled, base
		case testserver.ModeElastic:
			if rng.IntN(2) == 0 {
				a.Algorithm, a.Publish = scaled, base
			}
		case testserver.ModeShadow:
			a.Advisory = true
		}
		if base.Name() == algorithm.NameLeakyBucket && rng.IntN(3) == 0 {
			a.MaxDelay = randMicros(rng, time.Duration(burst)*interval) + time.Microsecond
		}
		checks := []testserver.StoreCheck{a}
		switch rng.IntN(4) {
		case 0: // a second rule with its own key
			checks = append(checks, testserver.StoreCheck{Rule: "b", Scope: scopeB, Key: fmt.Sprintf("u%d", rng.IntN(2)), N: 1, Algorithm: other})
		case 1: // the same state twice in one request
			if mode == testserver.ModeHard {
				b := a
				b.Rule = "a2"
				b.MaxDelay = 0
				checks = append(checks, b)
			}
		}
		md := apply(t, mem, now, checks...)
		rd := apply(t, rs, now, checks...)
		for j := range checks {
			m, r := md[j], rd[j]
			if m.Committed != r.Committed || atMicros(m.Decision) != r.Decision || atMicros(m.Published) != r.Published {
				t.Fatalf("request %d at %d µs, check %d (%s key %s n=%d maxDelay=%v) of %d:\nmemory: %+v committed=%t published %+v\nredis:  %+v committed=%t published %+v",
					i, now.UnixMicro(), j, checks[j].Rule, checks[j].Key, checks[j].N, checks[j].MaxDelay, len(checks),
					atMicros(m.Decision), m.Committed, atMicros(m.Published), r.Decision, r.Committed, r.Published)
			}
		}
	}
	if c := rs.Counters(); c.Decided != int64(n) || c.Errors+c.Timeouts != 0 {
		t.Fatalf("counters %+v, want %d decided by Redis and no failures", c, n)
	}
}

// randMicros returns a random whole-microsecond duration in [0, d].
func randMicros(rng *rand.Rand, d time.Duration) time.Duration {
	return time.Duration(rng.Int64N(int64(d/time.Microsecond)+1)) * time.Microsecond
}
