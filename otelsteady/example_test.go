package otelsteady_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync/atomic"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/otelsteady"
	"github.com/steadyhttp/steady/retry"
)

// A server that throttles the first request: the client retries it, and the telemetry shows two
// attempts (one 429, one 200), one retry, one throttled response, and two attempt spans, the
// second with http.request.resend_count 1. In a program, pass your SDK's providers (or none, for the
// global ones) and an exporter instead of the in-memory reader and recorder.
func Example() {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer mp.Shutdown(context.Background())
	defer tp.Shutdown(context.Background())

	tel, err := otelsteady.New(otelsteady.WithMeterProvider(mp), otelsteady.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}
	tr := client.NewTransport(nil, client.WithObserver(tel),
		client.WithRetry(retry.WithBaseDelay(time.Millisecond)))
	reg, err := tel.Watch(tr) // the learned rate and circuit state gauges
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()

	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, dp := range d.DataPoints {
				code, _ := dp.Attributes.Value("http.response.status_code")
				lines = append(lines, fmt.Sprintf("%s status=%s %d", m.Name, code.String(), dp.Value))
			}
		case metricdata.Gauge[float64]:
			lines = append(lines, fmt.Sprintf("%s reported for %d key", m.Name, len(d.DataPoints)))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	for _, s := range spans.Ended() {
		for _, a := range s.Attributes() {
			if a.Key == "http.request.resend_count" {
				fmt.Printf("span %s resend_count=%d\n", s.Name(), a.Value.AsInt64())
			}
		}
	}
	// Output:
	// steady.attempts status=200 1
	// steady.attempts status=429 1
	// steady.learned_rate reported for 1 key
	// steady.retries status= 1
	// steady.throttled_responses status=429 1
	// span GET resend_count=1
}
