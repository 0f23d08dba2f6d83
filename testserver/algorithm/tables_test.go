package algorithm

import (
	"testing"
	"time"
)

// Hand-written traces: each step asks for n requests at t0+at (t0 is aligned to every window here),
// checks the whole Decision, and commits it when allowed. They pin the boundaries: the first
// request, exactly at a refill or a window edge and one nanosecond before, n above the burst,
// windows that do not divide evenly, and late callers.

type step struct {
	at        time.Duration
	n         int64
	allowed   bool
	remaining int64
	retry     time.Duration
	reset     time.Duration
	delay     time.Duration
}

const ms, s = time.Millisecond, time.Second

func TestTraceTables(t *testing.T) {
	tests := []struct {
		name  string
		alg   string
		c     Config
		steps []step
	}{
		{"token bucket 3 per 3s", NameTokenBucket, Config{Limit: 3, Window: 3 * s}, []step{
			{at: 0, n: 1, allowed: true, remaining: 2, reset: 1 * s},      // first request
			{at: 0, n: 2, allowed: true, remaining: 0, reset: 3 * s},      // the burst, at one instant
			{at: 0, n: 1, retry: 1 * s, reset: 3 * s},                     // empty: one token per second
			{at: 1*s - 1, n: 1, retry: 1, reset: 2*s + 1},                 // a nanosecond before the refill
			{at: 1 * s, n: 1, allowed: true, remaining: 0, reset: 3 * s},  // exactly at the refill
			{at: 1 * s, n: 4, retry: Never, reset: 3 * s},                 // n above the capacity
			{at: 4 * s, n: 3, allowed: true, remaining: 0, reset: 3 * s},  // full again after 3s
			{at: 4*s + 500*ms, n: 2, retry: 1500 * ms, reset: 2500 * ms},  // half a token, needs two
			{at: 10 * s, n: 1, allowed: true, remaining: 2, reset: 1 * s}, // capped at the capacity
			{at: 9 * s, n: 1, allowed: true, remaining: 1, reset: 3 * s},  // late caller: counted at 10s
			{at: 9 * s, n: 0, allowed: true, remaining: 0, reset: 4 * s},  // n < 1 costs 1
		}},
		{"token bucket 3 per second: interval 333333333.3ns", NameTokenBucket, Config{Limit: 3, Window: s}, []step{
			{at: 0, n: 3, allowed: true, remaining: 0, reset: 1 * s},
			{at: 333333333, n: 1, retry: 1, reset: 666666667},
			{at: 333333334, n: 1, allowed: true, remaining: 0, reset: 1 * s},
		}},
		{"token bucket burst 2 below limit 10 per second", NameTokenBucket, Config{Limit: 10, Window: s, Burst: 2}, []step{
			{at: 0, n: 1, allowed: true, remaining: 1, reset: 100 * ms},
			{at: 0, n: 1, allowed: true, remaining: 0, reset: 200 * ms},
			{at: 0, n: 1, retry: 100 * ms, reset: 200 * ms},
			{at: 0, n: 3, retry: Never, reset: 200 * ms},
			{at: 100 * ms, n: 1, allowed: true, remaining: 0, reset: 200 * ms},
		}},
		{"leaky bucket 3 per 3s, queue of 3", NameLeakyBucket, Config{Limit: 3, Window: 3 * s}, []step{
			{at: 0, n: 1, allowed: true, remaining: 2, reset: 1 * s, delay: 0},     // served at once
			{at: 0, n: 1, allowed: true, remaining: 1, reset: 2 * s, delay: 1 * s}, // next slot
			{at: 0, n: 1, allowed: true, remaining: 0, reset: 3 * s, delay: 2 * s}, // last place
			{at: 0, n: 1, retry: 1 * s, reset: 3 * s},                              // queue full
			{at: 500 * ms, n: 1, retry: 500 * ms, reset: 2500 * ms},
			{at: 1*s - 1, n: 1, retry: 1, reset: 2*s + 1},
			{at: 1 * s, n: 1, allowed: true, remaining: 0, reset: 3 * s, delay: 2 * s}, // slot 3s
			{at: 1 * s, n: 4, retry: Never, reset: 3 * s},
			{at: 10 * s, n: 2, allowed: true, remaining: 1, reset: 2 * s, delay: 1 * s}, // two slots: 10s, 11s
		}},
		{"leaky bucket 3 per second, queue of 1", NameLeakyBucket, Config{Limit: 3, Window: s, Burst: 1}, []step{
			{at: 0, n: 1, allowed: true, remaining: 0, reset: 333333334},
			{at: 1, n: 1, retry: 333333333, reset: 333333333},
			{at: 333333333, n: 1, retry: 1, reset: 1},
			{at: 333333334, n: 1, allowed: true, remaining: 0, reset: 333333334},
		}},
		{"fixed window 3 per minute", NameFixedWindow, Config{Limit: 3, Window: time.Minute}, []step{
			{at: 0, n: 2, allowed: true, remaining: 1, reset: 60 * s},
			{at: 59 * s, n: 1, allowed: true, remaining: 0, reset: 1 * s},
			{at: 60*s - 1, n: 1, retry: 1, reset: 1},                       // last nanosecond of the window
			{at: 60 * s, n: 3, allowed: true, remaining: 0, reset: 60 * s}, // exactly at the edge: 6 in 1s
			{at: 60 * s, n: 4, retry: Never, reset: 60 * s},                // n above the limit
			{at: 119 * s, n: 1, retry: 1 * s, reset: 1 * s},
			{at: 30 * s, n: 1, retry: 90 * s, reset: 90 * s}, // late caller: counted in [60s, 120s)
			{at: 120 * s, n: 1, allowed: true, remaining: 2, reset: 60 * s},
		}},
		{"sliding log 3 per minute", NameSlidingLog, Config{Limit: 3, Window: time.Minute}, []step{
			{at: 0, n: 1, allowed: true, remaining: 2, reset: 60 * s},
			{at: 10 * s, n: 2, allowed: true, remaining: 0, reset: 60 * s},
			{at: 30 * s, n: 1, retry: 30 * s, reset: 40 * s}, // the entry at 0 leaves at 60s
			{at: 60*s - 1, n: 1, retry: 1, reset: 10*s + 1},
			{at: 60 * s, n: 1, allowed: true, remaining: 0, reset: 60 * s}, // (0s, 60s] no longer holds 0s
			{at: 60 * s, n: 2, retry: 10 * s, reset: 60 * s},               // both 10s entries must leave
			{at: 60 * s, n: 4, retry: Never, reset: 60 * s},
			{at: 30 * s, n: 1, retry: 40 * s, reset: 90 * s}, // late caller: counted at 60s
			{at: 200 * s, n: 3, allowed: true, remaining: 0, reset: 60 * s},
		}},
		{"sliding window 10 per 10s", NameSlidingWindow, Config{Limit: 10, Window: 10 * s}, []step{
			{at: 0, n: 10, allowed: true, remaining: 0, reset: 20 * s},
			{at: 5 * s, n: 1, retry: 6 * s, reset: 15 * s}, // next window at e=1s: 10*9s + 1*10s = 10*10s
			{at: 11*s - 1, n: 1, retry: 1, reset: 9*s + 1},
			{at: 11 * s, n: 1, allowed: true, remaining: 0, reset: 19 * s},
			{at: 15 * s, n: 1, allowed: true, remaining: 3, reset: 15 * s}, // weight 10*5s: 5 fit, 2 used
			{at: 15 * s, n: 4, retry: 1 * s, remaining: 3, reset: 15 * s},  // 10*4s + 6*10s = 10*10s at 16s
			{at: 15 * s, n: 11, retry: Never, remaining: 3, reset: 15 * s},
			{at: 30 * s, n: 1, allowed: true, remaining: 9, reset: 20 * s}, // two windows later: fresh
			{at: 25 * s, n: 1, allowed: true, remaining: 8, reset: 25 * s}, // late caller: counted at 30s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustNew(tt.alg, tt.c)
			var st State
			for i, sp := range tt.steps {
				now := t0.Add(sp.at)
				want := Decision{Allowed: sp.allowed, Limit: tt.c.Limit, Remaining: sp.remaining,
					ResetAfter: sp.reset, RetryAfter: sp.retry, Delay: sp.delay}
				got := a.Decide(&st, now, sp.n)
				if got != want {
					t.Fatalf("step %d (at %v, n=%d):\n got  %+v\n want %+v", i, sp.at, sp.n, got, want)
				}
				if got.Allowed {
					a.Commit(&st, now, sp.n)
				}
			}
		})
	}
}
