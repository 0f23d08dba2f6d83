package algorithm

import (
	"reflect"
	"testing"
)

// TestTakeIsDecideThenCommit checks on random traces (late callers, costs below one and above the
// burst included) that Take returns what Decide returns and leaves the State as Decide then, when
// it admits, Commit leave it, for every algorithm and for one this package did not build (foreign, which Take must decide
// through the interface).
func TestTakeIsDecideThenCommit(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			for trial := range 40 {
				r := seed(name, trial)
				a := mustNew(name, randomConfig(r, name))
				var took, decided, wrapped State
				for i, o := range randomTrace(r, a, t0ns, 300, true) {
					want := a.Decide(&decided, ts(o.t), o.n)
					if want.Allowed {
						a.Commit(&decided, ts(o.t), o.n)
					}
					var got Decision
					if Take(a, &took, ts(o.t), o.n, &got); got != want {
						t.Fatalf("trial %d step %d (t=%d n=%d): Take = %+v, Decide = %+v", trial, i, o.t, o.n, got, want)
					}
					got = Decision{Limit: -1} // Take must overwrite whatever it holds
					if Take(foreign{a}, &wrapped, ts(o.t), o.n, &got); got != want {
						t.Fatalf("trial %d step %d: Take of a foreign algorithm = %+v, Decide = %+v", trial, i, got, want)
					}
					if !reflect.DeepEqual(took, decided) || !reflect.DeepEqual(wrapped, decided) {
						t.Fatalf("trial %d step %d: states after Take %+v and %+v, after Decide and Commit %+v", trial, i, took, wrapped, decided)
					}
				}
			}
		})
	}
}
