package otelsteady

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxKeys is how many distinct keys the metrics and spans name before they report every
// further key as OtherKey. Each key multiplies the series of an instrument by the statuses and
// methods it sees (about ten for an API client): 100 keys keep an instrument near a thousand
// series, within what a metrics backend accepts per metric without complaint, and far above the
// handful of hosts or tokens one client paces by in practice.
const DefaultMaxKeys = 100

// OtherKey is the value of the steady.key attribute for every key beyond the first WithMaxKeys.
const OtherKey = "other"

// An Option configures a Telemetry in New.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	propagator     propagation.TextMapPropagator
	maxKeys        int
}

// WithMeterProvider sets where the metrics go (default: the global otel.GetMeterProvider(), read
// once by New). A nil mp is an invalid option.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: WithMeterProvider(nil)", ErrInvalidOption)
		}
		c.meterProvider = mp
		return nil
	})
}

// WithTracerProvider sets where the spans go (default: the global otel.GetTracerProvider(), read
// once by New). A nil tp is an invalid option.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) error {
		if tp == nil {
			return fmt.Errorf("%w: WithTracerProvider(nil)", ErrInvalidOption)
		}
		c.tracerProvider = tp
		return nil
	})
}

// WithPropagator sets how Telemetry.Propagate writes an attempt's trace context into its headers
// (default: the global otel.GetTextMapPropagator(), read once by New). A nil p is an invalid
// option.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) error {
		if p == nil {
			return fmt.Errorf("%w: WithPropagator(nil)", ErrInvalidOption)
		}
		c.propagator = p
		return nil
	})
}

// WithMaxKeys sets how many distinct keys are named in the steady.key attribute (default
// DefaultMaxKeys); the first n keys seen keep their name for the Telemetry's life, and every other
// key is reported as OtherKey. n must be at least 1.
func WithMaxKeys(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: WithMaxKeys(%d): must be at least 1", ErrInvalidOption, n)
		}
		c.maxKeys = n
		return nil
	})
}
