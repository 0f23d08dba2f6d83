package promstats

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/steadyhttp/steady/testserver"
)

// Namespace prefixes every metric name.
const Namespace = "steady_testserver"

// DecisionBuckets are the latency histogram's upper bounds, in seconds: from 10 µs (a decision in
// memory takes about 1 µs) doubling to about 2.6 s (a decision that waited a Redis store's deadline
// twice).
var DecisionBuckets = prometheus.ExponentialBuckets(10e-6, 2, 19)

// Collector is a prometheus.Collector over a Limiter's Stats, with a histogram of decision latency
// fed by Observe. Register it with a prometheus.Registerer. Safe for concurrent use.
type Collector struct {
	stats   func() testserver.Stats
	latency prometheus.Histogram

	requests, inFlight, keys, evictions                         *prometheus.Desc
	decided, roundTrips, timeouts, errs, opened, skipped        *prometheus.Desc
	policy, circuit, instances, share, reconciled, unreconciled *prometheus.Desc
}

// New returns a Collector reading stats (usually a Limiter's Stats method; it is called at each
// scrape, not before) and timing decisions passed to Observe.
func New(stats func() testserver.Stats) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &Collector{
		stats: stats,
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace,
			Name:      "decision_seconds",
			Help:      "Time from a request's arrival at the limiter to its decision (including the store's round trip).",
			Buckets:   DecisionBuckets,
		}),
		requests:     d("requests_total", "Requests decided per rule, by outcome: allowed, denied, shadowed (a shadow rule would have denied) or blocked (admitted by this rule, denied by another).", "rule", "outcome"),
		inFlight:     d("in_flight", "Requests inside the handlers the limiter's middleware wraps."),
		keys:         d("store_keys", "Per-key states the store keeps in memory (for the Redis store: its fallback's)."),
		evictions:    d("store_evictions_total", "States evicted to stay under the store's key cap."),
		decided:      d("store_shared_decisions_total", "Decisions the shared store (Redis) made."),
		roundTrips:   d("store_round_trips_total", "Round trips to the shared store; concurrent decisions share them."),
		timeouts:     d("store_timeouts_total", "Decisions whose round trip missed its deadline (decided by the policy)."),
		errs:         d("store_errors_total", "Round trips to the shared store that failed with an error."),
		opened:       d("store_circuit_opened_total", "Times the store's circuit opened."),
		skipped:      d("store_skipped_total", "Decisions made by the policy without asking, while the circuit was open."),
		policy:       d("store_policy_decisions_total", "Checks decided by the store-down policy, by policy.", "policy"),
		circuit:      d("store_circuit", "1 for the circuit's current state (closed, open or probing), 0 for the others.", "state"),
		instances:    d("store_instances", "Instances sharing the limits, as the store last saw them (0: unknown)."),
		share:        d("store_fallback_share", "Share of each limit the fallback policy enforces locally now."),
		reconciled:   d("store_reconciled_total", "Fallback admissions charged to the shared store when it answered again."),
		unreconciled: d("store_unreconciled", "Fallback admissions not charged to the shared store (waiting, or dropped)."),
	}
}

// Observe records the latency of one decision: the time since now, the decision time the
// limiter passed. Its signature is testserver.WithRequestHook's. With a limiter on a fake clock
// (testserver.WithClock) the latency is meaningless.
func (c *Collector) Observe(now time.Time, _ *http.Request, _ testserver.Result) {
	c.latency.Observe(time.Since(now).Seconds())
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.latency.Describe(ch)
	for _, d := range []*prometheus.Desc{c.requests, c.inFlight, c.keys, c.evictions, c.decided, c.roundTrips,
		c.timeouts, c.errs, c.opened, c.skipped, c.policy, c.circuit, c.instances, c.share, c.reconciled, c.unreconciled} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: it reads the limiter's Stats once.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.latency.Collect(ch)
	st := c.stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for rule, rc := range st.Rules {
		counter(c.requests, rc.Allowed, rule, "allowed")
		counter(c.requests, rc.Denied, rule, "denied")
		counter(c.requests, rc.Shadowed, rule, "shadowed")
		counter(c.requests, rc.Blocked, rule, "blocked")
	}
	gauge(c.inFlight, float64(st.InFlight))
	gauge(c.keys, float64(st.Store.Keys))
	counter(c.evictions, st.Store.Evictions)
	sh := st.Store.Shared
	if sh == nil {
		return
	}
	counter(c.decided, sh.Decided)
	counter(c.roundTrips, sh.RoundTrips)
	counter(c.timeouts, sh.Timeouts)
	counter(c.errs, sh.Errors)
	counter(c.opened, sh.CircuitOpened)
	counter(c.skipped, sh.Skipped)
	counter(c.policy, sh.Fallback, "fallback")
	counter(c.policy, sh.FailOpen, "fail-open")
	counter(c.policy, sh.FailClosed, "fail-closed")
	for _, s := range []string{"closed", "open", "probing"} {
		v := 0.0
		if sh.Circuit == s {
			v = 1
		}
		gauge(c.circuit, v, s)
	}
	gauge(c.instances, float64(sh.Instances))
	gauge(c.share, sh.FallbackShare)
	counter(c.reconciled, sh.Reconciled)
	gauge(c.unreconciled, float64(sh.Unreconciled))
}
