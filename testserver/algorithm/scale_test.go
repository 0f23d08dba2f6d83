package algorithm

import (
	"errors"
	"math"
	"testing"
	"time"
)

// foreign is an Algorithm this package did not create.
type foreign struct{ Algorithm }

func TestScaleParameters(t *testing.T) {
	tests := []struct {
		name      string
		alg       string
		c         Config
		limit     int64
		wantBurst int64
	}{
		{"bucket burst in proportion", NameTokenBucket, Config{Limit: 10, Window: time.Second, Burst: 5}, 20, 10},
		{"bucket burst rounded down", NameLeakyBucket, Config{Limit: 10, Window: time.Second, Burst: 5}, 3, 1},
		{"bucket burst at least 1", NameTokenBucket, Config{Limit: 10, Window: time.Second, Burst: 5}, 1, 1},
		{"bucket burst equal to limit", NameLeakyBucket, Config{Limit: 50, Window: time.Hour}, 55, 55},
		{"bucket exact in 128 bits", NameTokenBucket, Config{Limit: math.MaxInt64 / 2, Window: 1, Burst: math.MaxInt64 / 2}, math.MaxInt64, math.MaxInt64},
		{"bucket burst saturates", NameTokenBucket, Config{Limit: 1, Window: 1, Burst: math.MaxInt64}, 3, math.MaxInt64},
		{"fixed window", NameFixedWindow, Config{Limit: 100, Window: time.Minute}, 110, 110},
		{"sliding log lower", NameSlidingLog, Config{Limit: 100, Window: time.Minute}, 7, 7},
		{"sliding window", NameSlidingWindow, Config{Limit: 100, Window: time.Minute}, 150, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustNew(tt.alg, tt.c)
			b, err := Scale(a, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if b.Name() != a.Name() || b.Window() != a.Window() || b.Limit() != tt.limit || b.Burst() != tt.wantBurst {
				t.Fatalf("Scale = %s limit %d window %v burst %d; want %s limit %d window %v burst %d",
					b.Name(), b.Limit(), b.Window(), b.Burst(), a.Name(), tt.limit, a.Window(), tt.wantBurst)
			}
		})
	}
}

func TestScaleErrors(t *testing.T) {
	a := mustNew(NameTokenBucket, Config{Limit: 10, Window: time.Second})
	tests := []struct {
		name  string
		a     Algorithm
		limit int64
		want  error
	}{
		{"limit zero", a, 0, ErrInvalidLimit},
		{"limit negative", a, -5, ErrInvalidLimit},
		{"nil algorithm", nil, 10, ErrUnknownAlgorithm},
		{"foreign algorithm", foreign{a}, 10, ErrUnknownAlgorithm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := Scale(tt.a, tt.limit); !errors.Is(err, tt.want) || b != nil {
				t.Fatalf("Scale = %v, %v; want %v", b, err, tt.want)
			}
		})
	}
}

// TestScaleSharesState runs random traces on one State, each stretch decided by either the base
// algorithm or a Scale'd one (as the testserver's elastic mode does), and checks every decision of
// either against the reference model fed the same admissions and judged by the deciding algorithm's
// own quota: the State means the same to both (requests admitted and not yet forgotten or paid
// back). Retry-after stays exact for both, too.
func TestScaleSharesState(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			switches := 0
			for trial := range 40 {
				r := seed("scale "+name, trial)
				base := mustNew(name, randomConfig(r, name))
				limit := base.Limit()
				var other int64
				if limit <= 1e6 {
					other = 1 + r.Int64N(3*limit)
				} else {
					other = limit/2 + r.Int64N(limit)
				}
				ceiling, err := Scale(base, other)
				if err != nil {
					t.Fatal(err)
				}
				ref := newRef(name)
				if name == NameLeakyBucket {
					// The deficit model: under mixed rates the State keeps requests owed, not slots.
					ref = &refDeficit{owed: ref.(*refDeficit).owed, delay: true}
				}
				var s State
				x := base
				for i, o := range randomTrace(r, base, t0ns+r.Int64N(1e12), 300, false) {
					if r.IntN(8) == 0 { // stretches of a few steps each
						if x == base {
							x = ceiling
						} else {
							x = base
						}
						switches++
					}
					n := max(o.n, 1)
					p := paramsOf(x)
					got := x.Decide(&s, ts(o.t), o.n)
					want := ref.decide(p, o.t, n)
					if got.Allowed != want.allowed || got.Remaining != want.remaining ||
						got.ResetAfter != want.reset || got.Delay != want.delay {
						t.Fatalf("trial %d base %+v scaled to %d, step %d by limit %d (t=%d n=%d): got %+v, reference %+v",
							trial, paramsOf(base), other, i, x.Limit(), o.t, n, got, want)
					}
					checkRetryAfter(t, x, &s, o.t, o.n, got)
					if got.Allowed {
						x.Commit(&s, ts(o.t), o.n)
						ref.commit(p, o.t, n)
					}
				}
			}
			if switches < 1000 {
				t.Fatalf("only %d switches between base and scaled", switches)
			}
		})
	}
}

// TestScaleElastic is the elastic mode in miniature: a fresh key takes the base burst, then the
// ceiling admits the extra, and back under the base limit the key is full until it has paid back.
func TestScaleElastic(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			base := mustNew(name, Config{Limit: 10, Window: time.Minute})
			ceiling, err := Scale(base, 15)
			if err != nil {
				t.Fatal(err)
			}
			var s State
			now := t0.Add(time.Second)
			take := func(a Algorithm) int {
				got := 0
				for a.Decide(&s, now, 1).Allowed {
					a.Commit(&s, now, 1)
					got++
				}
				return got
			}
			if got := take(base); got != 10 {
				t.Fatalf("base admitted %d, want 10", got)
			}
			if got := take(ceiling); got != 5 {
				t.Fatalf("ceiling admitted %d more, want 5", got)
			}
			if d := base.Decide(&s, now, 1); d.Allowed || d.Remaining != 0 {
				t.Fatalf("base after the ceiling: %+v, want denied with nothing remaining", d)
			}
		})
	}
}
