// Package promstats exposes a testserver Limiter's counters, its decision latency and its store's
// counters (the Redis store's round trips, timeouts, errors, circuit and policy decisions) as
// Prometheus metrics, for the testserver binary's /metrics endpoint or a user's own registry.
//
//	var l *testserver.Limiter
//	m := promstats.New(func() testserver.Stats { return l.Stats() })
//	l, err := testserver.NewLimiter(rules, testserver.WithRequestHook(m.Observe))
//	...
//	registry.MustRegister(m)
//	handler := l.Middleware(app)
//
// The counters are read from Limiter.Stats when Prometheus scrapes, so they cost nothing per
// request; only the latency histogram is fed per request, through the request hook.
//
// It is its own package so that a program that does not import it does not build Prometheus's
// client.
package promstats
