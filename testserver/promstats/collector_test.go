package promstats

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/steadyhttp/steady/testserver"
)

// TestLimiterMetrics: a limiter of 2 per hour with the collector as its request hook: after 5
// requests the metrics say 2 allowed, 3 denied, 5 decisions timed; a memory store reports no
// shared-store metrics.
func TestLimiterMetrics(t *testing.T) {
	var l *testserver.Limiter
	m := New(func() testserver.Stats { return l.Stats() })
	l, err := testserver.NewLimiter([]testserver.Rule{{Name: "api", Limit: 2, Window: time.Hour}}, testserver.WithRequestHook(m.Observe))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h := l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 5 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	want := `
# HELP steady_testserver_requests_total Requests decided per rule, by outcome: allowed, denied, shadowed (a shadow rule would have denied) or blocked (admitted by this rule, denied by another).
# TYPE steady_testserver_requests_total counter
steady_testserver_requests_total{outcome="allowed",rule="api"} 2
steady_testserver_requests_total{outcome="blocked",rule="api"} 0
steady_testserver_requests_total{outcome="denied",rule="api"} 3
steady_testserver_requests_total{outcome="shadowed",rule="api"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "steady_testserver_requests_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m, "steady_testserver_decision_seconds"); n != 1 {
		t.Errorf("decision_seconds: %d series", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "steady_testserver_decision_seconds" {
			if c := mf.GetMetric()[0].GetHistogram().GetSampleCount(); c != 5 {
				t.Errorf("decision_seconds count %d, want 5", c)
			}
		}
		if strings.Contains(mf.GetName(), "round_trips") {
			t.Errorf("memory store exposes %s", mf.GetName())
		}
	}
}

// TestSharedStoreMetrics: a shared store's counters become the store metrics, the circuit's
// state a 1 among 0s.
func TestSharedStoreMetrics(t *testing.T) {
	m := New(func() testserver.Stats {
		return testserver.Stats{Store: testserver.StoreStats{Shared: &testserver.SharedStats{
			Decided: 90, RoundTrips: 7, Timeouts: 3, Errors: 1, Circuit: "open", CircuitOpened: 2,
			Skipped: 4, Fallback: 5, FailOpen: 0, FailClosed: 2, Instances: 3, FallbackShare: 1.0 / 3,
			Reconciled: 5, Unreconciled: 1,
		}}}
	})
	want := `
# HELP steady_testserver_store_circuit 1 for the circuit's current state (closed, open or probing), 0 for the others.
# TYPE steady_testserver_store_circuit gauge
steady_testserver_store_circuit{state="closed"} 0
steady_testserver_store_circuit{state="open"} 1
steady_testserver_store_circuit{state="probing"} 0
# HELP steady_testserver_store_policy_decisions_total Checks decided by the store-down policy, by policy.
# TYPE steady_testserver_store_policy_decisions_total counter
steady_testserver_store_policy_decisions_total{policy="fail-closed"} 2
steady_testserver_store_policy_decisions_total{policy="fail-open"} 0
steady_testserver_store_policy_decisions_total{policy="fallback"} 5
# HELP steady_testserver_store_round_trips_total Round trips to the shared store; concurrent decisions share them.
# TYPE steady_testserver_store_round_trips_total counter
steady_testserver_store_round_trips_total 7
# HELP steady_testserver_store_timeouts_total Decisions whose round trip missed its deadline (decided by the policy).
# TYPE steady_testserver_store_timeouts_total counter
steady_testserver_store_timeouts_total 3
# HELP steady_testserver_store_instances Instances sharing the limits, as the store last saw them (0: unknown).
# TYPE steady_testserver_store_instances gauge
steady_testserver_store_instances 3
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "steady_testserver_store_circuit",
		"steady_testserver_store_policy_decisions_total", "steady_testserver_store_round_trips_total",
		"steady_testserver_store_timeouts_total", "steady_testserver_store_instances"); err != nil {
		t.Error(err)
	}
}
