package otelsteady

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/retry"
)

// ScopeName is the instrumentation scope of the Telemetry's meter and tracer.
const ScopeName = "github.com/steadyhttp/steady/otelsteady"

// KeyAttr is the attribute naming the key an attempt is paced by (a host, by default).
const KeyAttr = attribute.Key("steady.key")

// Telemetry reports a steady client stack's events as OpenTelemetry metrics and a span per
// attempt. It is a client.Observer (and a client.AttemptObserver): pass it to client.WithObserver.
// Watch adds the gauges of a Transport's learned rates and circuit states; CircuitChanged and
// LearnerChanged count the transitions of the breaker and the learner when passed to their
// observer options. The instruments (see the package documentation) are made by New.
//
// A Telemetry is safe for concurrent use and starts no goroutine; one may serve several
// Transports. Create it with New; the zero value is not usable.
type Telemetry struct {
	keys       *keySet
	meter      metric.Meter
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator

	attempts, retries, throttledResponses, gaveUp metric.Int64Counter
	circuitTransitions, learnerTransitions        metric.Int64Counter
	attemptDuration, queueWait, throttleWait      metric.Float64Histogram
	learnedRate, breakerState                     metric.Float64ObservableGauge
}

var (
	_ client.Observer        = (*Telemetry)(nil)
	_ client.AttemptObserver = (*Telemetry)(nil)
)

// waitBuckets are the histogram bounds of every wait and attempt duration, in seconds: from a
// millisecond (the spacing of a pace of 1,000 requests per second) to five minutes (the longest
// Retry-After the retry layer waits out by default), about three bounds per decade.
var waitBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// New returns a Telemetry configured by opts, with its instruments made on the meter provider. An
// invalid option gives an error matching ErrInvalidOption; a meter that fails to make an instrument
// gives that error.
func New(opts ...Option) (*Telemetry, error) {
	c := config{maxKeys: DefaultMaxKeys}
	for i, o := range opts {
		if o == nil {
			return nil, errors.Join(ErrInvalidOption, errors.New("otelsteady: option "+strconv.Itoa(i)+" is nil"))
		}
		if err := o.apply(&c); err != nil {
			return nil, err
		}
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.propagator == nil {
		c.propagator = otel.GetTextMapPropagator()
	}
	t := &Telemetry{
		keys:       newKeySet(c.maxKeys),
		meter:      c.meterProvider.Meter(ScopeName),
		tracer:     c.tracerProvider.Tracer(ScopeName),
		propagator: c.propagator,
	}
	if err := t.instruments(); err != nil {
		return nil, err
	}
	return t, nil
}

// instruments makes the Telemetry's instruments.
func (t *Telemetry) instruments() error {
	m := t.meter
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	seconds := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(waitBuckets...))
		errs = append(errs, err)
		return h
	}
	t.attempts = counter("steady.attempts", "{attempt}", "Attempts sent through the stack, by key, method and outcome (status or error.type).")
	t.retries = counter("steady.retries", "{attempt}", "Attempts that sent a request again (http.request.resend_count above 0).")
	t.throttledResponses = counter("steady.throttled_responses", "{response}", "Responses that were throttles (429, or a dialect's throttle such as GitHub's 403 with nothing left).")
	t.gaveUp = counter("steady.gave_up", "{request}", "Requests whose last attempt failed and were not retried, by the rule that stopped them (steady.cause).")
	t.circuitTransitions = counter("steady.breaker.transitions", "{transition}", "State changes of the circuit breaker, by key and states.")
	t.learnerTransitions = counter("steady.learner.transitions", "{transition}", "Transitions of the learner (a belief or the strategy in charge), by key, strategy and state.")
	t.attemptDuration = seconds("steady.attempt.duration", "Duration of an attempt until its response headers, breaker and throttle waits included.")
	t.queueWait = seconds("steady.queue.wait", "Time a request waited in the queue for a place (only requests that waited).")
	t.throttleWait = seconds("steady.throttle.wait", "Time an attempt waited for its key's pace or pause (only attempts that waited).")
	var err error
	t.learnedRate, err = m.Float64ObservableGauge("steady.learned_rate", metric.WithUnit("{request}/s"),
		metric.WithDescription("The pace the learning limiter of a key keeps now (Watch)."))
	errs = append(errs, err)
	t.breakerState, err = m.Float64ObservableGauge("steady.breaker.state", metric.WithUnit("1"),
		metric.WithDescription("1 for the state a key's circuit is in (steady.circuit.state attribute), 0 for the others (Watch)."))
	errs = append(errs, err)
	return errors.Join(errs...)
}

// keyAttr returns the steady.key attribute of key, OtherKey beyond the cap.
func (t *Telemetry) keyAttr(key string) attribute.KeyValue { return KeyAttr.String(t.keys.name(key)) }

// Queued records the queue wait in steady.queue.wait.
func (t *Telemetry) Queued(req *http.Request, waited time.Duration) {
	t.queueWait.Record(req.Context(), waited.Seconds())
}

// Throttled records the throttle wait in steady.throttle.wait and adds a "steady.throttle.wait"
// event to the attempt's span.
func (t *Telemetry) Throttled(req *http.Request, key string, waited time.Duration) {
	ctx := req.Context()
	t.throttleWait.Record(ctx, waited.Seconds(), metric.WithAttributes(t.keyAttr(key)))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("steady.throttle.wait", trace.WithAttributes(attribute.Float64("steady.wait", waited.Seconds())))
	}
}

// Attempt does nothing: AttemptStarted reports attempts, with their key.
func (t *Telemetry) Attempt(*http.Request, int) {}

// Retry does nothing: AttemptStarted counts the attempts that are sent again (steady.retries).
func (t *Telemetry) Retry(*http.Request, int, retry.Reason, time.Duration) {}

// GaveUp counts the request in steady.gave_up, by method and the rule that ended the retries.
func (t *Telemetry) GaveUp(req *http.Request, _ int, _ retry.Reason, cause error) {
	t.gaveUp.Add(req.Context(), 1, metric.WithAttributes(method(req.Method), attribute.String("steady.cause", causeName(cause))))
}

// AttemptStarted starts the attempt's span (kind client, named after the method, with
// http.request.method, url.full, server.address and server.port, steady.key, and
// http.request.resend_count from the second attempt on) and counts a second or later attempt in
// steady.retries.
func (t *Telemetry) AttemptStarted(ctx context.Context, a client.AttemptInfo) context.Context {
	req := a.Request
	key := t.keyAttr(a.Key)
	m := method(req.Method)
	if a.Number > 1 {
		t.retries.Add(ctx, 1, metric.WithAttributes(key, m))
	}
	attrs := []attribute.KeyValue{m, key, semconv.URLFull(req.URL.Redacted())}
	if h := req.URL.Hostname(); h != "" {
		attrs = append(attrs, semconv.ServerAddress(h))
	}
	if p := port(req); p > 0 {
		attrs = append(attrs, semconv.ServerPort(p))
	}
	if a.Number > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(a.Number-1))
	}
	name := m.Value.AsString()
	if name == "_OTHER" {
		name = "HTTP"
	}
	ctx, _ = t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx
}

// AttemptEnded counts the attempt in steady.attempts (and steady.throttled_responses when its
// response was a throttle), records steady.attempt.duration, and ends the span with the response's
// status code or the error's type; a status of 400 or more, or an error, sets the span's status to
// Error.
func (t *Telemetry) AttemptEnded(ctx context.Context, a client.AttemptResult) {
	key := t.keyAttr(a.Key)
	m := method(a.Request.Method)
	var outcome attribute.KeyValue
	span := trace.SpanFromContext(ctx)
	switch {
	case a.Err != nil:
		outcome = semconv.ErrorTypeKey.String(errorType(a.Err))
		span.SetStatus(codes.Error, a.Err.Error())
		span.SetAttributes(outcome)
	case a.Response != nil:
		code := a.Response.StatusCode
		outcome = semconv.HTTPResponseStatusCode(code)
		span.SetAttributes(outcome)
		if code >= 400 {
			span.SetStatus(codes.Error, "")
			span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(code)))
		}
		if code >= 400 && dialects.Read(a.Response, time.Now()).Throttled {
			t.throttledResponses.Add(ctx, 1, metric.WithAttributes(key, outcome))
			span.SetAttributes(attribute.Bool("steady.throttled", true))
		}
	}
	set := metric.WithAttributes(key, m, outcome)
	t.attempts.Add(ctx, 1, set)
	t.attemptDuration.Record(ctx, a.Elapsed.Seconds(), set)
	span.End()
}

// method is the http.request.method attribute: the method when it is a known one, else _OTHER
// (the semantic conventions bound its values so).
func method(m string) attribute.KeyValue {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return semconv.HTTPRequestMethodKey.String(m)
	case "":
		return semconv.HTTPRequestMethodKey.String(http.MethodGet) // net/http's meaning of ""
	}
	return semconv.HTTPRequestMethodKey.String("_OTHER")
}

// port is the request's server port: the URL's, else the scheme's default.
func port(req *http.Request) int {
	if p := req.URL.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err == nil {
			return n
		}
		return 0
	}
	switch req.URL.Scheme {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}
