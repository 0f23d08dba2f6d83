package otelsteady

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// scripted answers the n-th request it sees with statuses[n] (the last one repeated), with a
// Retry-After of one second on a 429, and records the requests' headers.
type scripted struct {
	mu       sync.Mutex
	statuses []int
	n        int
	headers  []http.Header
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	code := s.statuses[min(s.n, len(s.statuses)-1)]
	s.n++
	s.headers = append(s.headers, req.Header)
	s.mu.Unlock()
	if req.Body != nil {
		req.Body.Close()
	}
	h := http.Header{}
	if code == http.StatusTooManyRequests {
		h.Set("Retry-After", "1")
	}
	return &http.Response{StatusCode: code, Header: h, Body: http.NoBody, Request: req}, nil
}

// sdk is an in-memory OpenTelemetry SDK: a ManualReader for metrics and a SpanRecorder for spans.
type sdk struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	mp     *sdkmetric.MeterProvider
	tp     *sdktrace.TracerProvider
}

func newSDK(t *testing.T) *sdk {
	t.Helper()
	s := &sdk{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	t.Cleanup(func() {
		_ = s.mp.Shutdown(context.Background())
		_ = s.tp.Shutdown(context.Background())
	})
	return s
}

func (s *sdk) telemetry(t *testing.T, opts ...Option) *Telemetry {
	t.Helper()
	tel, err := New(append([]Option{WithMeterProvider(s.mp), WithTracerProvider(s.tp)}, opts...)...)
	require.NoError(t, err)
	return tel
}

// collect returns the metrics collected now, by instrument name.
func (s *sdk) collect(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, s.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sums returns a counter's value per value of attribute key ("" when absent).
func sums(t *testing.T, data metricdata.Aggregation, key string) map[string]int64 {
	t.Helper()
	sum, ok := data.(metricdata.Sum[int64])
	require.True(t, ok, "an int64 sum, got %T", data)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(key))
		out[v.String()] += dp.Value
	}
	return out
}

// gauge returns a float64 gauge's value per attribute set, written as "k=v,k=v".
func gauge(t *testing.T, data metricdata.Aggregation) map[string]float64 {
	t.Helper()
	g, ok := data.(metricdata.Gauge[float64])
	require.True(t, ok, "a float64 gauge, got %T", data)
	out := map[string]float64{}
	for _, dp := range g.DataPoints {
		out[dp.Attributes.Encoded(attribute.DefaultEncoder())] = dp.Value
	}
	return out
}
