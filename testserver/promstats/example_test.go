package promstats_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/promstats"
)

// A middleware's metrics in the application's own registry: the collector reads the limiter's
// counters at each scrape and times each decision through the request hook.
func Example() {
	var l *testserver.Limiter
	m := promstats.New(func() testserver.Stats { return l.Stats() })
	l, err := testserver.NewLimiter([]testserver.Rule{{Name: "api", Limit: 1, Window: time.Minute}},
		testserver.WithRequestHook(m.Observe))
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	// Serve promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) at /metrics.

	h := l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	n, _ := testutil.GatherAndCount(reg, "steady_testserver_requests_total")
	fmt.Println("series:", n)
	// Output:
	// series: 4
}
