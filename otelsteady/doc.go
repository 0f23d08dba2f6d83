// Package otelsteady reports what a steady client stack does as OpenTelemetry metrics and a span
// per attempt. It is a nested module (github.com/steadyhttp/steady/otelsteady), so that a program
// importing only steady's client does not pull OpenTelemetry in.
//
//	tel, err := otelsteady.New() // the global meter and tracer providers, or WithMeterProvider...
//	tr := client.NewTransport(nil,
//		client.WithObserver(tel),                                // metrics and a span per attempt
//		client.WithBase(tel.Propagate(nil)),                     // the attempt's trace context to the server
//		client.WithBreaker(breaker.WithObserver(tel.CircuitChanged)), // circuit transitions
//	)
//	reg, err := tel.Watch(tr) // learned rate and circuit state gauges; reg.Unregister() to stop
//	httpClient := &http.Client{Transport: tr}
//
// # Metrics
//
// Every instrument is made on the meter named ScopeName; steady.key (KeyAttr) names the key an
// attempt is paced by (its host, by default), and http.request.method, http.response.status_code
// and error.type follow the OpenTelemetry semantic conventions.
//
//	steady.attempts             counter    attempts, by key, method, status or error.type
//	steady.retries              counter    attempts sent again (resend count above 0), by key, method
//	steady.throttled_responses  counter    responses that were throttles, by key, status
//	steady.gave_up              counter    requests given up, by method, steady.cause
//	steady.attempt.duration     histogram  s, attempt until its headers, waits included
//	steady.queue.wait           histogram  s, time in the queue (requests that waited)
//	steady.throttle.wait        histogram  s, time held by the pace or a pause, by key
//	steady.learned_rate         gauge      requests/s the learner of a key paces at (Watch)
//	steady.breaker.state        gauge      1 for the circuit's state, 0 for the others (Watch)
//	steady.breaker.transitions  counter    circuit state changes (CircuitChanged)
//	steady.learner.transitions  counter    learner transitions (LearnerChanged)
//
// Keys have bounded cardinality: the first WithMaxKeys keys (DefaultMaxKeys) keep their name, and
// every later key is reported as OtherKey, so that a key per API token or per user cannot blow up a
// metrics backend.
//
// # Spans
//
// Each attempt gets a span of kind client, child of the request's context, named after the method,
// with http.request.method, url.full (redacted), server.address, server.port, steady.key, and from
// the second attempt on http.request.resend_count (the number of times the request was sent
// again). It ends when the attempt's response headers are in or it failed, with
// http.response.status_code or error.type; a status of 400 or more or an error sets the span's
// status to Error. It covers the attempt's wait for the breaker and the throttle: a throttle wait
// is a span event, steady.throttle.wait. Propagate writes the attempt's trace context into the
// request's headers.
//
// The hook is client.AttemptObserver, an optional interface of client.Observer: any Observer may
// implement it to see each attempt start and end with a context of its own.
package otelsteady
