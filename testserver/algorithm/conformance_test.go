package algorithm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The conformance suite: properties every algorithm must have, run over all of them.

// paramsOf returns a's parameters as the reference models take them.
func paramsOf(a Algorithm) params {
	return params{limit: a.Limit(), window: int64(a.Window()), burst: a.Burst()}
}

// seed returns a deterministic PCG source for the named subtest.
func seed(name string, trial int) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range []byte(name) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(h, uint64(trial)))
}

func TestNamesAndNew(t *testing.T) {
	want := []string{"token-bucket", "leaky-bucket", "fixed-window", "sliding-log", "sliding-window"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		a, err := New(name, Config{Limit: 5, Window: time.Second})
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if a.Name() != name || a.Limit() != 5 || a.Window() != time.Second || a.Burst() != 5 {
			t.Errorf("New(%q) = %s limit %d window %v burst %d", name, a.Name(), a.Limit(), a.Window(), a.Burst())
		}
	}
	_, err := New("token_bucket", Config{Limit: 5, Window: time.Second})
	if !errors.Is(err, ErrUnknownAlgorithm) || !strings.Contains(err.Error(), `"token_bucket"`) {
		t.Errorf("New(unknown) error = %v, want ErrUnknownAlgorithm naming the value", err)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		c       Config
		want    error  // nil: valid for every algorithm
		windows error  // the error for the window algorithms, when it differs
		names   string // substring the message must contain
	}{
		{"limit zero", Config{Limit: 0, Window: time.Second}, ErrInvalidLimit, nil, "limit 0"},
		{"limit negative", Config{Limit: -3, Window: time.Second}, ErrInvalidLimit, nil, "limit -3"},
		{"window zero", Config{Limit: 1, Window: 0}, ErrInvalidWindow, nil, "window 0s"},
		{"window negative", Config{Limit: 1, Window: -time.Minute}, ErrInvalidWindow, nil, "window -1m0s"},
		{"burst negative", Config{Limit: 5, Window: time.Second, Burst: -1}, ErrInvalidBurst, nil, "burst -1"},
		{"burst below limit", Config{Limit: 5, Window: time.Second, Burst: 2}, nil, ErrInvalidBurst, "burst 2"},
		{"burst above limit", Config{Limit: 5, Window: time.Second, Burst: 9}, nil, ErrInvalidBurst, "burst 9"},
		{"burst equal to limit", Config{Limit: 5, Window: time.Second, Burst: 5}, nil, nil, ""},
		{"burst zero means limit", Config{Limit: 5, Window: time.Second}, nil, nil, ""},
		{"extremes", Config{Limit: math.MaxInt64, Window: math.MaxInt64, Burst: math.MaxInt64}, nil, nil, ""},
	}
	for _, tt := range tests {
		for _, name := range Names() {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				want := tt.want
				if want == nil && name != NameTokenBucket && name != NameLeakyBucket {
					want = tt.windows
				}
				a, err := New(name, tt.c)
				if want == nil {
					if err != nil || a == nil {
						t.Fatalf("New(%q, %+v) = %v, %v; want an algorithm", name, tt.c, a, err)
					}
					return
				}
				if !errors.Is(err, want) || a != nil {
					t.Fatalf("New(%q, %+v) = %v, %v; want %v", name, tt.c, a, err, want)
				}
				if !strings.Contains(err.Error(), tt.names) || !strings.Contains(err.Error(), name) {
					t.Errorf("error %q should name %q and the algorithm", err, tt.names)
				}
			})
		}
	}
}

// TestBurstAtOneInstant checks the one meaning of burst: a fresh key admits exactly Burst requests
// at one instant, whatever the algorithm.
func TestBurstAtOneInstant(t *testing.T) {
	tests := []struct {
		c     Config
		names []string
		want  int
	}{
		{Config{Limit: 50, Window: time.Hour, Burst: 50}, Names(), 50},
		{Config{Limit: 50, Window: time.Hour}, Names(), 50},
		{Config{Limit: 50, Window: time.Hour, Burst: 7}, []string{NameTokenBucket, NameLeakyBucket}, 7},
		{Config{Limit: 3, Window: time.Nanosecond, Burst: 80}, []string{NameTokenBucket, NameLeakyBucket}, 80},
		{Config{Limit: 1, Window: 24 * time.Hour}, Names(), 1},
	}
	for _, tt := range tests {
		for _, name := range tt.names {
			t.Run(fmt.Sprintf("%s/%+v", name, tt.c), func(t *testing.T) {
				a := mustNew(name, tt.c)
				var s State
				now := t0.Add(1234567 * time.Nanosecond) // not at a window edge
				admitted := 0
				for range 4 * tt.want {
					if a.Decide(&s, now, 1).Allowed {
						a.Commit(&s, now, 1)
						admitted++
					}
				}
				if admitted != tt.want {
					t.Fatalf("admitted %d at one instant, want %d", admitted, tt.want)
				}
			})
		}
	}
}

// TestMatchesReferenceModel compares every decision on random traces (allowed, remaining, reset,
// delay) with the reference model written from the documented definition in math/big arithmetic.
func TestMatchesReferenceModel(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			for trial := range 40 {
				r := seed(name, trial)
				a := mustNew(name, randomConfig(r, name))
				p, ref := paramsOf(a), newRef(name)
				var s State
				for i, o := range randomTrace(r, a, t0ns+r.Int64N(1e12), 300, false) {
					n := max(o.n, 1)
					got := a.Decide(&s, ts(o.t), o.n)
					want := ref.decide(p, o.t, n)
					if got.Allowed != want.allowed || got.Remaining != want.remaining ||
						got.ResetAfter != want.reset || got.Delay != want.delay {
						t.Fatalf("trial %d %+v step %d (t=%d n=%d): got %+v, reference %+v", trial, p, i, o.t, o.n, got, want)
					}
					if got.Limit != a.Limit() || got.Remaining < 0 || got.ResetAfter < 0 || got.Delay < 0 {
						t.Fatalf("step %d: malformed decision %+v", i, got)
					}
					if got.Allowed {
						a.Commit(&s, ts(o.t), o.n)
						ref.commit(p, o.t, n)
					}
				}
			}
		})
	}
}

// checkRetryAfter fails unless d's RetryAfter is exact for n requests at now against s: admitted
// exactly then, denied a nanosecond before; Never only for n above the burst.
func checkRetryAfter(t *testing.T, a Algorithm, s *State, now, n int64, d Decision) {
	t.Helper()
	if d.Allowed {
		if d.RetryAfter != 0 {
			t.Fatalf("allowed with RetryAfter %v", d.RetryAfter)
		}
		return
	}
	if max(n, 1) > a.Burst() {
		if d.RetryAfter != Never {
			t.Fatalf("n=%d above burst %d: RetryAfter %v, want Never", n, a.Burst(), d.RetryAfter)
		}
		return
	}
	if d.RetryAfter <= 0 || d.RetryAfter == Never {
		t.Fatalf("denied n=%d at %d: RetryAfter %v", n, now, d.RetryAfter)
	}
	then := now + int64(d.RetryAfter)
	if got := a.Decide(s, ts(then), n); !got.Allowed {
		t.Fatalf("denied n=%d at %d with RetryAfter %v, but retrying then is denied too: %+v", n, now, d.RetryAfter, got)
	}
	if got := a.Decide(s, ts(then-1), n); got.Allowed {
		t.Fatalf("denied n=%d at %d with RetryAfter %v, but a retry 1ns earlier is admitted", n, now, d.RetryAfter)
	}
}

// TestRetryAfterIsExact checks every denial on random traces, late callers included.
func TestRetryAfterIsExact(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			denials := 0
			for trial := range 60 {
				r := seed(name, trial)
				a := mustNew(name, randomConfig(r, name))
				var s State
				for _, o := range randomTrace(r, a, t0ns+r.Int64N(1e12), 400, true) {
					d := a.Decide(&s, ts(o.t), o.n)
					checkRetryAfter(t, a, &s, o.t, o.n, d)
					if d.Allowed {
						a.Commit(&s, ts(o.t), o.n)
					} else {
						denials++
					}
				}
			}
			if denials < 1000 {
				t.Fatalf("only %d denials checked; the traces do not exercise the limit", denials)
			}
		})
	}
}

// TestDecideChangesNothing checks that Decide and Idle leave the State exactly as they found it, the
// Log's contents included, for admissions and denials alike.
func TestDecideChangesNothing(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			for trial := range 20 {
				r := seed(name, trial)
				a := mustNew(name, randomConfig(r, name))
				var s State
				for i, o := range randomTrace(r, a, t0ns, 300, true) {
					before := s.Clone()
					d := a.Decide(&s, ts(o.t), o.n)
					a.Idle(&s, ts(o.t))
					if !reflect.DeepEqual(before, s) {
						t.Fatalf("step %d: Decide (allowed=%v) changed the state from %+v to %+v", i, d.Allowed, before, s)
					}
					if d.Allowed {
						a.Commit(&s, ts(o.t), o.n)
					}
				}
			}
		})
	}
}

// TestIdle checks that Idle is true exactly when the State decides like a fresh one, and that an
// idle State then agrees with a fresh one on a random future.
func TestIdle(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			idle, busy := 0, 0
			for trial := range 30 {
				r := seed(name, trial)
				a := mustNew(name, randomConfig(r, name))
				var s State
				for i, o := range randomTrace(r, a, t0ns, 200, false) {
					now := ts(o.t)
					var fresh State
					same := a.Decide(&s, now, 1) == a.Decide(&fresh, now, 1)
					if got := a.Idle(&s, now); got != same {
						t.Fatalf("trial %d step %d: Idle = %v, but decides like a fresh state: %v (%+v)", trial, i, got, same, s)
					}
					if !same {
						busy++
					} else if idle++; idle%3 == 0 {
						kept := s.Clone()
						for j, f := range randomTrace(r, a, o.t, 60, false) {
							d1, d2 := a.Decide(&kept, ts(f.t), f.n), a.Decide(&fresh, ts(f.t), f.n)
							if d1 != d2 {
								t.Fatalf("trial %d step %d: idle state and fresh state part ways %d steps later: %+v vs %+v", trial, i, j, d1, d2)
							}
							if d1.Allowed {
								a.Commit(&kept, ts(f.t), f.n)
								a.Commit(&fresh, ts(f.t), f.n)
							}
						}
					}
					if d := a.Decide(&s, now, o.n); d.Allowed {
						a.Commit(&s, now, o.n)
					}
				}
			}
			if idle < 100 || busy < 100 {
				t.Fatalf("idle %d, busy %d: the traces do not exercise both", idle, busy)
			}
		})
	}
}

// TestLateCaller checks that a caller whose now is older than what the State has seen (it read the
// clock before another caller committed) is never admitted where a caller at the latest time
// would be denied.
func TestLateCaller(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			late := 0
			for trial := range 30 {
				r := seed(name, trial)
				a := mustNew(name, randomConfig(r, name))
				var s State
				latest := int64(0)
				for i, o := range randomTrace(r, a, t0ns, 300, true) {
					if o.t < latest {
						late++
						if a.Decide(&s, ts(o.t), o.n).Allowed && !a.Decide(&s, ts(latest), o.n).Allowed {
							t.Fatalf("trial %d step %d: admitted late at %d but denied at the latest time %d", trial, i, o.t, latest)
						}
					}
					latest = max(latest, o.t)
					if a.Decide(&s, ts(o.t), o.n).Allowed {
						a.Commit(&s, ts(o.t), o.n)
					}
				}
			}
			if late < 100 {
				t.Fatalf("only %d late callers", late)
			}
		})
	}
}

// TestCostBelowOne checks that n < 1 is charged as 1, by Decide and Commit.
func TestCostBelowOne(t *testing.T) {
	for _, name := range Names() {
		for _, n := range []int64{0, -1, math.MinInt64} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				a := mustNew(name, Config{Limit: 3, Window: time.Second})
				var s1, s2 State
				for i := range 5 {
					now := t0.Add(time.Duration(i) * 100 * time.Millisecond)
					d1, d2 := a.Decide(&s1, now, n), a.Decide(&s2, now, 1)
					if d1 != d2 {
						t.Fatalf("step %d: Decide(n=%d) = %+v, Decide(1) = %+v", i, n, d1, d2)
					}
					if d1.Allowed {
						a.Commit(&s1, now, n)
						a.Commit(&s2, now, 1)
					}
					if !reflect.DeepEqual(s1, s2) {
						t.Fatalf("step %d: Commit(n=%d) left %+v, Commit(1) %+v", i, n, s1, s2)
					}
				}
			})
		}
	}
}
