package otelsteady

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// Propagate returns a RoundTripper that writes the trace context of each request's context (the
// attempt's span, when it runs as the stack's base) into a copy of its headers with the
// propagator (WithPropagator), and sends the copy through next (http.DefaultTransport when nil),
// so that the server's spans are children of the attempt's. Use it as the stack's base:
// client.WithBase(tel.Propagate(nil)). It never modifies the request it is given, and is safe for
// concurrent use.
func (t *Telemetry) Propagate(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &propagating{next: next, p: t.propagator}
}

type propagating struct {
	next http.RoundTripper
	p    propagation.TextMapPropagator
}

func (p *propagating) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	out := req.Clone(ctx) // Clone copies the headers, so req's are not touched
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	p.p.Inject(ctx, propagation.HeaderCarrier(out.Header))
	return p.next.RoundTrip(out)
}

// CloseIdleConnections closes next's idle connections, when it can.
func (p *propagating) CloseIdleConnections() {
	if c, ok := p.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
