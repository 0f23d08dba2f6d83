package learn

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// The bound admittedLog gives is the model's: no server of L per W, of any kind testserver
// enforces, admits more than 2L in a moment and L per W after it, so the rate it reads from what
// was admitted never exceeds L/W, however the requests came (a flood at every millisecond, bursts
// at every window's edge, random gaps), and reaches most of it where the client kept the server
// busy.
func TestAdmittedNeverReadsAboveTheRate(t *testing.T) {
	kinds := []string{"token-bucket", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window"}
	for _, kind := range kinds {
		for _, q := range []struct {
			limit  int64
			window time.Duration
		}{{1, time.Second}, {5, time.Second}, {16, 250 * time.Millisecond}, {100, time.Minute}} {
			for _, pattern := range []string{"flood", "edges", "random"} {
				t.Run(fmt.Sprintf("%s/%d-per-%v/%s", kind, q.limit, q.window, pattern), func(t *testing.T) {
					alg, err := algorithm.New(kind, algorithm.Config{Limit: q.limit, Window: q.window, Burst: q.limit})
					if err != nil {
						t.Fatal(err)
					}
					var st algorithm.State
					var log admittedLog
					rng := rand.New(rand.NewPCG(uint64(q.limit), 3))
					rate := float64(q.limit) / float64(q.window)
					start := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
					now, admitted, best := start, 0, 0.0
					for steps := 0; admitted < 3*admittedLogSize && steps < 1<<21; steps++ {
						switch pattern {
						case "flood":
							now = now.Add(time.Millisecond)
						case "edges":
							// Every request at a window's last or first microsecond.
							next := now.Truncate(q.window).Add(q.window)
							if now.Before(next.Add(-time.Microsecond)) {
								now = next.Add(-time.Microsecond)
							} else {
								now = now.Add(time.Microsecond)
							}
						case "random":
							now = now.Add(time.Duration(rng.Int64N(int64(2 * q.window / time.Duration(q.limit)))))
						}
						if d := alg.Decide(&st, now, 1); d.Allowed {
							alg.Commit(&st, now, 1)
							admitted++
							log.add(now.Sub(start).Nanoseconds())
							r, _, _ := log.floorRate(2*q.limit, 0)
							if r > rate*(1+1e-9) {
								t.Fatalf("read %.4g/s of a server of %d per %v (%.4g/s) after %d admitted", r*1e9, q.limit, q.window, rate*1e9, admitted)
							}
							best = max(best, r)
						}
					}
					sustained := rate
					if kind == "sliding-window" {
						// A counter weighs the window past: kept busy, it sustains L-1 per W
						// (one request every other window at L = 1).
						sustained = max(float64(q.limit)-1, 0.5) / float64(q.window)
					}
					if pattern == "flood" && q.limit <= 16 && best < sustained*0.8 {
						// Flooded, the server admits at the rate it sustains, and n admissions
						// against a hold of 2L read at least (n-2L)/n of it: 7/8 at n = 256.
						t.Errorf("read at most %.4g/s of a server sustaining %.4g/s kept busy", best*1e9, sustained*1e9)
					}
				})
			}
		}
	}
}

// Answers come back out of send order; the log keeps send order, and an admission older than all
// it holds is dropped.
func TestAdmittedLogKeepsSendOrder(t *testing.T) {
	var log admittedLog
	for _, s := range []int64{10, 30, 20, 40, 35} {
		log.add(s)
	}
	want := []int64{10, 20, 30, 35, 40}
	for i, w := range want {
		if got := log.sent[i]; got != w {
			t.Fatalf("slot %d = %d, want %d (%v)", i, got, w, log.sent[:5])
		}
	}
	for i := range int64(admittedLogSize) {
		log.add(100 + i)
	}
	log.add(5) // older than every admission held
	if oldest := log.sent[log.n%admittedLogSize]; oldest != 100 {
		t.Fatalf("oldest = %d, want 100", oldest)
	}
	// 6 admitted in a span of 5 (and a margin of 5): one beyond a hold of 5, per 10.
	var six admittedLog
	for s := range int64(6) {
		six.add(s)
	}
	if r, k, span := six.floorRate(5, 5); r != 0.1 || k != 6 || span != 10 {
		t.Fatalf("floorRate = %v, %d, %d; want 0.1, 6, 10", r, k, span)
	}
	if r, _, _ := six.floorRate(6, 5); r != 0 {
		t.Fatalf("floorRate over no more than the hold = %v, want 0", r)
	}
}
