package otelsteady

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/throttle/learn"
)

func spanAttr(attrs []attribute.KeyValue, key string) (attribute.Value, bool) {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestAttemptsRetriesSpans: a request answered 429, 503, then 200 is three attempts (one per
// status), two retries, one throttled response, three durations, and three client spans under the
// caller's span, the later two carrying http.request.resend_count 1 and 2.
func TestAttemptsRetriesSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		tel := s.telemetry(t)
		base := &scripted{statuses: []int{429, 503, 200}}
		c := client.New(client.WithBase(base), client.WithoutPace(), client.WithObserver(tel))

		ctx, parent := s.tp.Tracer("test").Start(context.Background(), "job")
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test:8080/items?id=1", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		parent.End()

		m := s.collect(t)
		assert.Equal(t, map[string]int64{"429": 1, "503": 1, "200": 1}, sums(t, m["steady.attempts"], "http.response.status_code"))
		assert.Equal(t, map[string]int64{"api.test:8080": 3}, sums(t, m["steady.attempts"], "steady.key"))
		assert.Equal(t, map[string]int64{"GET": 2}, sums(t, m["steady.retries"], "http.request.method"))
		assert.Equal(t, map[string]int64{"429": 1}, sums(t, m["steady.throttled_responses"], "http.response.status_code"))
		h, ok := m["steady.attempt.duration"].(metricdata.Histogram[float64])
		require.True(t, ok)
		var n uint64
		for _, dp := range h.DataPoints {
			n += dp.Count
		}
		assert.Equal(t, uint64(3), n)
		assert.NotContains(t, m, "steady.gave_up")

		var attempts []sdktrace.ReadOnlySpan
		for _, sp := range s.spans.Ended() {
			if sp.Name() == "GET" {
				attempts = append(attempts, sp)
			}
		}
		require.Len(t, attempts, 3)
		for i, sp := range attempts {
			assert.Equal(t, trace.SpanKindClient, sp.SpanKind())
			assert.Equal(t, parent.SpanContext().SpanID(), sp.Parent().SpanID(), "a child of the caller's span")
			rc, has := spanAttr(sp.Attributes(), "http.request.resend_count")
			if i == 0 {
				assert.False(t, has, "the first attempt has no resend count")
			} else {
				assert.True(t, has)
				assert.Equal(t, int64(i), rc.AsInt64())
			}
			host, _ := spanAttr(sp.Attributes(), "server.address")
			assert.Equal(t, "api.test", host.AsString())
			port, _ := spanAttr(sp.Attributes(), "server.port")
			assert.Equal(t, int64(8080), port.AsInt64())
		}
		code, _ := spanAttr(attempts[0].Attributes(), "http.response.status_code")
		assert.Equal(t, int64(429), code.AsInt64())
		assert.Equal(t, codes.Error, attempts[0].Status().Code)
		thr, _ := spanAttr(attempts[0].Attributes(), "steady.throttled")
		assert.True(t, thr.AsBool())
		assert.Equal(t, codes.Unset, attempts[2].Status().Code)
	})
}

// TestGaveUpAndErrors: a request that keeps failing gives up with the cause attempts_exhausted, and
// an attempt refused by the throttle is counted with its error.type.
func TestGaveUpAndErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		tel := s.telemetry(t)
		c := client.New(client.WithBase(&scripted{statuses: []int{503}}), client.WithoutPace(), client.WithObserver(tel),
			client.WithRetry(retry.WithMaxAttempts(2)))
		resp, err := c.Get("http://api.test/")
		require.NoError(t, err)
		resp.Body.Close()

		tr := c.Transport.(*client.Transport)
		tr.Throttle().Pause("api.test", time.Now().Add(time.Hour))
		req, err := http.NewRequestWithContext(request.WithMaxWait(context.Background(), time.Second), http.MethodGet, "http://api.test/", nil)
		require.NoError(t, err)
		_, err = c.Do(req)
		require.Error(t, err)

		m := s.collect(t)
		assert.Equal(t, map[string]int64{"attempts_exhausted": 1}, sums(t, m["steady.gave_up"], "steady.cause"))
		assert.Equal(t, map[string]int64{"": 2, "wait_too_long": 1}, sums(t, m["steady.attempts"], "error.type"))
		var refused sdktrace.ReadOnlySpan
		for _, sp := range s.spans.Ended() {
			if et, ok := spanAttr(sp.Attributes(), "error.type"); ok && et.AsString() == "wait_too_long" {
				refused = sp
			}
		}
		require.NotNil(t, refused, "the refused attempt's span carries its error.type")
		assert.Equal(t, codes.Error, refused.Status().Code)
	})
}

// TestKeyCardinality: beyond WithMaxKeys keys, every key is reported as OtherKey.
func TestKeyCardinality(t *testing.T) {
	s := newSDK(t)
	tel := s.telemetry(t, WithMaxKeys(2))
	c := client.New(client.WithBase(&scripted{statuses: []int{200}}), client.WithoutPace(), client.WithObserver(tel))
	for i := range 5 {
		ctx := request.WithKey(context.Background(), fmt.Sprintf("k%d", i%4))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	got := sums(t, s.collect(t)["steady.attempts"], "steady.key")
	assert.Equal(t, map[string]int64{"k0": 2, "k1": 1, OtherKey: 2}, got)
}

// TestWatchGauges: the learned rate of a learning key, and the circuit state, which follows the
// breaker from closed to open; CircuitChanged and LearnerChanged count transitions.
func TestWatchGauges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		tel := s.telemetry(t)
		base := &scripted{statuses: []int{429, 200, 200, 500}}
		tr := client.NewTransport(base, client.WithObserver(tel),
			client.WithLearner(learn.WithObserver(tel.LearnerChanged)),
			client.WithRetry(retry.WithMaxAttempts(1)),
			client.WithBreaker(breaker.WithMinRequests(4), breaker.WithFailureRatio(0.25), breaker.WithMode(breaker.FailFast),
				breaker.WithObserver(tel.CircuitChanged)))
		reg, err := tel.Watch(tr)
		require.NoError(t, err)
		c := &http.Client{Transport: tr}
		get := func() {
			resp, err := c.Get("http://api.test/")
			require.NoError(t, err)
			resp.Body.Close()
		}
		get() // 429
		get() // 200
		get() // 200
		m := s.collect(t)
		g := gauge(t, m["steady.learned_rate"])
		require.Contains(t, g, "steady.key=api.test")
		rate, _ := tr.LearnedRate("api.test")
		assert.Equal(t, rate, g["steady.key=api.test"])
		assert.Greater(t, rate, 0.0)
		assert.Equal(t, map[string]float64{
			"steady.circuit.state=closed,steady.key=api.test":    1,
			"steady.circuit.state=open,steady.key=api.test":      0,
			"steady.circuit.state=half-open,steady.key=api.test": 0,
		}, gauge(t, m["steady.breaker.state"]))
		assert.NotEmpty(t, sums(t, m["steady.learner.transitions"], "steady.learner.strategy"), "the 429 made the learner change")

		get() // 500: 1 failure in 4 opens the circuit
		m = s.collect(t)
		assert.Equal(t, 1.0, gauge(t, m["steady.breaker.state"])["steady.circuit.state=open,steady.key=api.test"])
		assert.Equal(t, map[string]int64{"open": 1}, sums(t, m["steady.breaker.transitions"], "steady.breaker.to"))

		require.NoError(t, reg.Unregister())
		m = s.collect(t)
		assert.NotContains(t, m, "steady.learned_rate", "no gauge after Unregister")
	})
}

// TestPropagate: the server gets the attempt span's trace context; the caller's headers stay as
// they were.
func TestPropagate(t *testing.T) {
	s := newSDK(t)
	tel := s.telemetry(t, WithPropagator(propagation.TraceContext{}))
	base := &scripted{statuses: []int{200}}
	c := client.New(client.WithBase(tel.Propagate(base)), client.WithoutPace(), client.WithObserver(tel))
	req, err := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	require.NoError(t, err)
	req.Header.Set("X-Mine", "1")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.Header{"X-Mine": {"1"}}, req.Header, "the caller's headers are not modified")
	require.Len(t, base.headers, 1)
	spans := s.spans.Ended()
	require.Len(t, spans, 1)
	sc := spans[0].SpanContext()
	want := fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
	assert.Equal(t, want, base.headers[0].Get("Traceparent"))
	assert.Equal(t, "1", base.headers[0].Get("X-Mine"))
}

// TestInvalidOptions: each invalid option is an error matching ErrInvalidOption; Watch(nil) fails.
func TestInvalidOptions(t *testing.T) {
	for name, o := range map[string]Option{
		"nil":            nil,
		"meter":          WithMeterProvider(nil),
		"tracer":         WithTracerProvider(nil),
		"propagator":     WithPropagator(nil),
		"max keys 0":     WithMaxKeys(0),
		"max keys below": WithMaxKeys(-1),
	} {
		_, err := New(o)
		assert.True(t, errors.Is(err, ErrInvalidOption), "%s: %v", name, err)
	}
	tel, err := New()
	require.NoError(t, err)
	_, err = tel.Watch(nil)
	assert.ErrorIs(t, err, ErrNilTransport)
}
