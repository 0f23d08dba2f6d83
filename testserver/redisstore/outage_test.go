package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestOutageBounds stops Redis mid-run (SIGSTOP: it hangs with its data intact, as across a
// partition) under three stores sharing one limit, and checks each policy against the bound
// docs/redis-store.md gives for it. The limit is a token bucket of 30 per hour (burst 30), so
// nothing refills during the test; 5 are taken before the outage.
//
//   - fallback: during the outage the three stores, registered in Redis, each enforce 1/3 of the
//     limit locally: together at most one burst (30). When Redis answers again those admissions
//     are charged to it, so the 25 Redis still had are not handed out again: over the run, at
//     most limit + burst, and here 5 + 30 and nothing after.
//   - fail-closed: nothing admitted during the outage; Redis's 25 remain afterwards.
//   - fail-open: everything admitted during the outage (no bound), and not charged afterwards.
func TestOutageBounds(t *testing.T) {
	const (
		limit     = 30
		before    = 5
		outageReq = 90 // three times what the fallback can admit
		afterReq  = 40
	)
	for _, tc := range []struct {
		policy Policy
		// outage: the most admitted during the outage; after: exactly admitted afterwards.
		outageMax, outageMin, after int
	}{
		{Fallback, limit, limit, 0},
		{FailClosed, 0, 0, limit - before},
		{FailOpen, outageReq, outageReq, limit - before},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			srv := startRedis(t)
			prefix := uniquePrefix(t)
			var stores []*Store
			for range 3 {
				stores = append(stores, openStore(t, srv.URL(), WithKeyPrefix(prefix), WithPolicy(tc.policy),
					WithTimeout(50*time.Millisecond), WithFailureWindow(100*time.Millisecond), WithRetryInterval(200*time.Millisecond)))
			}
			for _, st := range stores {
				st.register(context.Background()) // each sees the others' registrations
				if c := st.Counters(); c.Instances != 3 || c.FallbackShare != 1.0/3 {
					t.Fatalf("registry: %+v, want 3 instances, share 1/3", c)
				}
			}
			tb := mustAlg(t, algorithm.NameTokenBucket, limit, time.Hour, 0)
			check := testserver.StoreCheck{Rule: "r", Scope: "r|tb|30|1h", Key: "k", N: 1, Algorithm: tb}
			admit := func(n int) int {
				t.Helper()
				admitted := 0
				for i := range n {
					ds, err := stores[i%3].Apply(context.Background(), time.Now(), []testserver.StoreCheck{check})
					if err != nil {
						t.Fatal(err)
					}
					if ds[0].Decision.Allowed {
						admitted++
					}
				}
				return admitted
			}
			if got := admit(before); got != before {
				t.Fatalf("before the outage: %d admitted, want %d", got, before)
			}

			srv.Pause()
			during := admit(outageReq)
			srv.Resume()
			if during > tc.outageMax || during < tc.outageMin {
				t.Errorf("during the outage: %d of %d admitted, want %d to %d", during, outageReq, tc.outageMin, tc.outageMax)
			}
			// Back: every store's circuit closes within a retry interval (a failed probe keeps it
			// open that long); 5 s is the "never" bound.
			for _, st := range stores {
				for deadline := time.Now().Add(5 * time.Second); st.Counters().Circuit != circuitClosed || st.Counters().Decided == 0; {
					if time.Now().After(deadline) {
						t.Fatalf("not back on Redis: %+v", st.Counters())
					}
					time.Sleep(20 * time.Millisecond)
					probe := check
					probe.Scope = "probe" // its own state: the probes change nothing above
					if _, err := st.Apply(context.Background(), time.Now(), []testserver.StoreCheck{probe}); err != nil {
						t.Fatal(err)
					}
				}
			}
			var charged, uncharged, late int64
			for _, st := range stores {
				c := st.Counters()
				charged += c.Reconciled
				uncharged += c.Unreconciled
				late += c.Timeouts
			}
			// A decision that missed its deadline was still in Redis's input: Redis ran it when
			// it resumed, consuming quota the policy had decided on its own (under-admission,
			// never over): at most one per missed deadline.
			after := admit(afterReq)
			if after > tc.after || int64(after) < int64(tc.after)-late {
				t.Errorf("after the outage: %d of %d admitted, want %d, or down to %d less (decisions that missed their deadline)", after, afterReq, tc.after, late)
			}
			// The probes (their own state) may have been decided by the fallback too.
			if tc.policy == Fallback && (charged < int64(during) || uncharged != 0) {
				t.Errorf("charged %d, uncharged %d; want at least the %d admitted during the outage, and 0", charged, uncharged, during)
			}
			if tc.policy != Fallback && charged+uncharged != 0 {
				t.Errorf("%s charged %d, uncharged %d: it counts nothing locally", tc.policy, charged, uncharged)
			}
			t.Logf("%s: %d before, %d during (of %d), %d after (of %d); %d missed deadlines", tc.policy, before, during, outageReq, after, afterReq, late)
		})
	}
}
