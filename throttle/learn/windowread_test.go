package learn_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// firstRequestWindow is a fixed window that starts at the first request after the last one ended
// (Redis INCR + EXPIRE, GitHub's primary limit): L per W, its end said as Unix seconds rounded up
// (the testserver personas' unixCeil), against a Date header truncated to the second; no window said.
type firstRequestWindow struct {
	limit        int
	w            time.Duration
	start        time.Time
	count        int
	truncate     bool // the end's Unix seconds truncated (expiration.Unix()), not rounded up
	windowStarts []time.Time
}

func (f *firstRequestWindow) answer(at time.Time) *http.Response {
	if f.start.IsZero() || !at.Before(f.start.Add(f.w)) {
		f.start, f.count = at, 0
		f.windowStarts = append(f.windowStarts, at)
	}
	end := f.start.Add(f.w)
	endSec := end.Unix()
	if end.Nanosecond() > 0 && !f.truncate {
		endSec++
	}
	status := http.StatusOK
	if f.count >= f.limit {
		status = http.StatusTooManyRequests
	} else {
		f.count++
	}
	return resp(status,
		"Date: "+at.UTC().Format(http.TimeFormat),
		fmt.Sprintf("X-RateLimit-Limit: %d", f.limit),
		fmt.Sprintf("X-RateLimit-Remaining: %d", f.limit-f.count),
		fmt.Sprintf("X-RateLimit-Reset: %d", endSec))
}

// TestAWindowThatBeginsAtTheFirstRequestIsReadAsIs: a fixed window that begins at the first
// request after the last one ended names its ends a window and the wait for that request apart,
// at windows of 10 s and a minute, ends rounded up or truncated, any phase of the second, round
// trips of 2 and 100 ms: the window read from the resets never grows past the window and its
// second of truncation (the gaps of two instants set it only within the reading's grain).
func TestAWindowThatBeginsAtTheFirstRequestIsReadAsIs(t *testing.T) {
	for _, truncate := range []bool{false, true} {
		for _, w := range []time.Duration{10 * time.Second, time.Minute} {
			for _, frac := range []int{0, 250, 500, 750, 950, 999} {
				for _, rtt := range []time.Duration{2 * time.Millisecond, 100 * time.Millisecond} {
					t.Run(fmt.Sprintf("truncate=%v/%v/frac%d/rtt%v", truncate, w, frac, rtt), func(t *testing.T) { ratchet(t, w, truncate, frac, rtt) })
				}
			}
		}
	}
}

// TestIdleSpellsDoNotWidenTheWindow: the same window, with the client idle past each reset for a
// spell that grows a second at a time, or is random up to 20 s: each spell puts two ends a window
// and the spell apart, and a widening measured against the last widening grew the minute to 1m36s.
func TestIdleSpellsDoNotWidenTheWindow(t *testing.T) {
	t.Run("growing", func(t *testing.T) { idleRatchet(t, false, 200) })
	t.Run("random", func(t *testing.T) { idleRatchet(t, true, 2000) })
}

func idleRatchet(t *testing.T, random bool, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	const limit = 5
	w := time.Minute
	l, _, _ := observedLearner(t)
	srv := &firstRequestWindow{limit: limit, w: w, truncate: true}
	at := time.Unix(1_700_000_000, 300_000_000)
	idle := time.Duration(0)
	for sent := 0; sent < n; sent++ {
		if d := waitFor(t, l, at); d > 0 {
			at = at.Add(d)
			if d > 5*time.Second && sent > 20 {
				at = at.Add(idle) // idle past the reset
				if random {
					idle = time.Duration(rng.Int64N(int64(20 * time.Second)))
				} else {
					idle += time.Second
				}
				if waitFor(t, l, at) != 0 {
					t.Fatal("held")
				}
			} else {
				send(t, l, at)
			}
		}
		l.ObserveAttempt(at, at.Add(2*time.Millisecond), srv.answer(at.Add(time.Millisecond)), nil)
		at = at.Add(2 * time.Millisecond)
	}
	if got := l.LearnedLimit(); got.Window > w+time.Second {
		t.Errorf("learned %+v of a %v window after idle spells of up to %v", got, w, idle)
	}
}

func ratchet(t *testing.T, w time.Duration, truncate bool, frac int, rtt time.Duration) {
	const limit = 5
	l, _, _ := observedLearner(t)
	srv := &firstRequestWindow{limit: limit, w: w, truncate: truncate}
	at := time.Unix(1_700_000_000, int64(frac)*1_000_000)
	begin := at
	refused, sent := 0, 0
	for sent < 400 {
		if d := waitFor(t, l, at); d > 0 {
			at = at.Add(d)
			send(t, l, at)
		}
		sent++
		r := srv.answer(at.Add(rtt / 2))
		if r.StatusCode != http.StatusOK {
			refused++
		}
		l.ObserveAttempt(at, at.Add(rtt), r, nil)
		at = at.Add(rtt)
	}
	n := len(srv.windowStarts)
	var gaps []time.Duration
	for i := max(n-6, 1); i < n; i++ {
		gaps = append(gaps, srv.windowStarts[i].Sub(srv.windowStarts[i-1]).Round(time.Millisecond))
	}
	got := l.LearnedLimit()
	t.Logf("learned %v %v; %d refused of %d; %.3fx; last gaps between windows %v", got.Window, got.Kind, refused, sent, float64(at.Sub(begin))/float64(w)/float64(sent)*limit, gaps)
	if got.Window > w+time.Second {
		t.Errorf("learned window %v of a %v window", got.Window, w)
	}
}
