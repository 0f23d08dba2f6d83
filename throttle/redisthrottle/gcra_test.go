package redisthrottle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestKnownRateSchedule books reservations at one explicit instant and checks the GCRA delays and
// the stored slot to the microsecond.
func TestKnownRateSchedule(t *testing.T) {
	c := newClient(t, redisURL(t))
	tests := []struct {
		name  string
		rate  float64
		burst int
		n     int
		want  []time.Duration
	}{
		{"even 100/s", 100, 1, 4, []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}},
		{"burst 3", 100, 3, 5, []time.Duration{0, 0, 0, 10 * time.Millisecond, 20 * time.Millisecond}},
		{"3/s rounds the interval up", 3, 1, 3, []time.Duration{0, 333334 * time.Microsecond, 666668 * time.Microsecond}},
		{"slow", 0.5, 2, 3, []time.Duration{0, 0, 2 * time.Second}},
		{"fast", 1e6, 1, 3, []time.Duration{0, time.Microsecond, 2 * time.Microsecond}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A known rate's state expires a millisecond after its last slot, on Redis's real
			// clock, while the test's clock stands still: at 1e6/s the three reservations must
			// come within a millisecond of real time, or the second finds no state (as a caller
			// whose clock moved on would, rightly). A busy machine gets more tries, on fresh keys.
			var l *Limiter
			var delays []time.Duration
			var stored string
			var err error
			for try := 0; ; try++ {
				l = mustNew(t, c, fmt.Sprintf("schedule-%d-%d", i, try), WithRate(tt.rate, tt.burst))
				delays = delays[:0]
				start := time.Now()
				for range tt.n {
					r, rerr := l.Reserve(epoch)
					if rerr != nil {
						t.Fatal(rerr)
					}
					delays = append(delays, r.Delay(epoch))
				}
				stored, err = c.HGet(context.Background(), l.Key(), "t").Result()
				if err == nil && time.Since(start) < time.Millisecond || try == 50 {
					break
				}
			}
			for j, got := range delays {
				if got != tt.want[j] {
					t.Errorf("reservation %d: delay %v, want %v", j, got, tt.want[j])
				}
			}
			interval := intervalMicros(tt.rate)
			want := strconv.FormatInt(epoch.UnixMicro()+int64(tt.n)*interval, 10)
			if err != nil || stored != want {
				t.Errorf("stored slot %s (%v), want %s (exact to the µs)", stored, err, want)
			}
			if s := l.Stats(); s.Redis != int64(tt.n) || s.Fallback != 0 || s.Errors != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// TestKnownRateIdleAndExpiry: a key that has been idle for longer than its schedule starts fresh,
// and its state expires once back at its initial value.
func TestKnownRateIdleAndExpiry(t *testing.T) {
	c := newClient(t, redisURL(t))
	l := mustNew(t, c, "idle", WithRate(10, 2))
	for range 4 {
		if _, err := l.Reserve(epoch); err != nil {
			t.Fatal(err)
		}
	}
	// booked through epoch+400ms; the key expires then (plus at most a millisecond)
	ttl, err := c.PTTL(context.Background(), l.Key()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > 401*time.Millisecond {
		t.Errorf("PTTL %v, want in (0, 401ms]", ttl)
	}
	later := epoch.Add(time.Second)
	for i := range 3 {
		r, _ := l.Reserve(later)
		want := time.Duration(0)
		if i == 2 {
			want = 100 * time.Millisecond
		}
		if got := r.Delay(later); got != want {
			t.Errorf("after idle, reservation %d: delay %v, want %v", i, got, want)
		}
	}
}

// TestCancel: a cancelled reservation gives its slot back only when it was the last booked, once.
func TestCancel(t *testing.T) {
	c := newClient(t, redisURL(t))
	l := mustNew(t, c, "cancel", WithRate(100, 1))
	first, _ := l.Reserve(epoch) // due now
	r2, _ := l.Reserve(epoch)    // +10ms
	r3, _ := l.Reserve(epoch)    // +20ms
	first.Cancel(epoch)          // due: counts as sent, no-op
	r3.Cancel(epoch)             // last: given back
	r3.Cancel(epoch)             // second call: no-op
	r4, _ := l.Reserve(epoch)
	if got := r4.Delay(epoch); got != 20*time.Millisecond {
		t.Errorf("after giving the last slot back, next delay %v, want 20ms", got)
	}
	r2.Cancel(epoch) // not last (r4 is after it): lost
	r5, _ := l.Reserve(epoch)
	if got := r5.Delay(epoch); got != 30*time.Millisecond {
		t.Errorf("after losing a middle slot, next delay %v, want 30ms", got)
	}
	r5.Cancel(epoch.Add(30 * time.Millisecond)) // due by then: no-op
	s := l.Stats()
	if s.Returned != 1 || s.Lost != 1 {
		t.Errorf("returned %d lost %d, want 1 and 1", s.Returned, s.Lost)
	}
	if got, want := hget(t, c, l, "t"), strconv.FormatInt(epoch.UnixMicro()+40_000, 10); got != want {
		t.Errorf("stored slot %s, want %s", got, want)
	}
}

// throttledPair returns two limiters (two processes) on key, the first having booked a request at
// epoch and seen it refused (429) a millisecond later with retryAfter ("" for none).
func throttledPair(t *testing.T, url, key, retryAfter string, opts ...Option) (a, b *Limiter) {
	t.Helper()
	a = mustNew(t, newClient(t, url), key, opts...)
	b = mustNew(t, newClient(t, url), key, opts...)
	if _, err := a.Reserve(epoch); err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
	if retryAfter != "" {
		resp.Header.Set("Retry-After", retryAfter)
	}
	a.Observe(epoch.Add(time.Millisecond), resp, nil)
	return a, b
}

// TestSharedPause: a throttled response with Retry-After seen by one process pauses the key for
// another.
func TestSharedPause(t *testing.T) {
	url := redisURL(t)
	for _, learning := range []bool{false, true} {
		t.Run(fmt.Sprintf("learning=%v", learning), func(t *testing.T) {
			var opts []Option
			if !learning {
				opts = append(opts, WithRate(100, 1))
			}
			a, b := throttledPair(t, url, fmt.Sprintf("pause-%v", learning), "2", opts...)
			now := epoch.Add(5 * time.Millisecond)
			r, _ := b.Reserve(now)
			if got, want := r.Delay(now), 2*time.Second-4*time.Millisecond; got != want {
				t.Errorf("other process delay %v, want %v (until the pause ends)", got, want)
			}
			if a.Stats().Throttles != 1 {
				t.Errorf("throttles %d, want 1", a.Stats().Throttles)
			}
		})
	}
}

// TestSharedPauseResumed: Resume in one process (Throttle.Resume calls it) ends the pause it
// shared, for every process: the next booking waits for the pace alone, as long as after the same
// throttle without a Retry-After.
func TestSharedPauseResumed(t *testing.T) {
	url := redisURL(t)
	for _, learning := range []bool{false, true} {
		t.Run(fmt.Sprintf("learning=%v", learning), func(t *testing.T) {
			var opts []Option
			if !learning {
				opts = append(opts, WithRate(100, 1))
			}
			now := epoch.Add(5 * time.Millisecond)
			// nextDelay: the delay of another process's next booking after one throttle with
			// retryAfter ("" none), resumed or not.
			nextDelay := func(name, retryAfter string, resume bool) time.Duration {
				a, b := throttledPair(t, url, fmt.Sprintf("pause-resumed-%v-%s", learning, name), retryAfter, opts...)
				if resume {
					a.Resume(now)
					ok, err := newClient(t, url).HExists(context.Background(), a.Key(), "pu").Result()
					if err != nil || ok {
						t.Errorf("shared pause after Resume: %v (%v), want none", ok, err)
					}
				}
				r, _ := b.Reserve(now)
				if a.Stats().Errors+b.Stats().Errors != 0 {
					t.Errorf("Redis errors: %d and %d", a.Stats().Errors, b.Stats().Errors)
				}
				return r.Delay(now)
			}
			if got := nextDelay("held", "30", false); got < 29*time.Second {
				t.Fatalf("not resumed: delay %v, want the pause's 30 s", got)
			}
			pace := nextDelay("control", "", false)
			if got := nextDelay("resumed", "30", true); got != pace {
				t.Errorf("resumed: delay %v, want %v (the pace's alone, as after a throttle without Retry-After)", got, pace)
			}
		})
	}
}

// TestSharedPauseIsBounded: a Retry-After of a day pauses the other processes for the bound
// (WithMaxPause; DefaultMaxPause by default), as each process's own pause is bounded, not for the day.
func TestSharedPauseIsBounded(t *testing.T) {
	url := redisURL(t)
	if _, err := New(newClient(t, url), "bad", WithMaxPause(0)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithMaxPause(0): %v, want ErrInvalidOption", err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want time.Duration
	}{{"default", nil, DefaultMaxPause}, {"ten seconds", []Option{WithMaxPause(10 * time.Second)}, 10 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]Option{WithRate(100, 1)}, tc.opts...)
			_, b := throttledPair(t, url, "pause-bounded-"+tc.name, "86400", opts...)
			now := epoch.Add(5 * time.Millisecond)
			r, _ := b.Reserve(now)
			if got, want := r.Delay(now), tc.want-4*time.Millisecond; got != want {
				t.Errorf("other process delay %v, want %v (the bound, not the day asked)", got, want)
			}
		})
	}
}

// TestLiveProcesses: limiters register in Redis, and the count sets the fallback share.
func TestLiveProcesses(t *testing.T) {
	url := redisURL(t)
	var ls []*Limiter
	for i := range 3 {
		l := mustNew(t, newClient(t, url), "live", WithRate(90, 1))
		if _, err := l.Reserve(epoch.Add(time.Duration(i) * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	if got := ls[2].Stats().Processes; got != 3 {
		t.Fatalf("third limiter sees %d processes, want 3", got)
	}
	if got := ls[2].share(); got != 1.0/3 {
		t.Errorf("share %v, want 1/3", got)
	}
	// a process not seen for LiveWindow no longer counts
	ls[0].lastReg.Store(0)
	if _, err := ls[0].Reserve(epoch.Add(LiveWindow + 2*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if got := ls[0].Stats().Processes; got != 2 {
		t.Errorf("after the live window, %d processes, want 2 (the first and the third)", got)
	}
	if got := ls[0].share(); got != 0.5 {
		t.Errorf("share %v, want 0.5", got)
	}
}
