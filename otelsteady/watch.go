package otelsteady

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/throttle/learn"
)

// ErrNilTransport is returned by Watch for a nil Transport.
var ErrNilTransport = errors.New("otelsteady: nil Transport")

// BreakerStateAttr is the attribute naming a circuit's state in steady.breaker.state and
// steady.breaker.transitions: "closed", "open" or "half-open".
const BreakerStateAttr = attribute.Key("steady.circuit.state")

var circuitStates = []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}

// Watch reports tr's gauges at every collection, for each key the Telemetry names (the first
// WithMaxKeys keys its attempts used; a key counted as OtherKey has no gauge):
//   - steady.learned_rate: the pace in requests per second of the key's learning limiter
//     (client.Transport.LearnedRate), for keys paced by one;
//   - steady.breaker.state: 1 for the state the key's circuit is in and 0 for the other two, with
//     the state in steady.circuit.state, when tr has a breaker (client.WithBreaker).
//
// Unregister the returned Registration to stop. Watching several Transports that pace the same
// keys reports each key's gauges once per Transport, with the same attributes; give them distinct
// keys or one Telemetry each.
func (t *Telemetry) Watch(tr *client.Transport) (metric.Registration, error) {
	if tr == nil {
		return nil, ErrNilTransport
	}
	return t.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		b := tr.Breaker()
		now := time.Now()
		for _, key := range t.keys.named() {
			k := KeyAttr.String(key)
			if r, ok := tr.LearnedRate(key); ok {
				o.ObserveFloat64(t.learnedRate, r, metric.WithAttributes(k))
			}
			if b == nil {
				continue
			}
			cur, _ := b.State(key, now)
			for _, s := range circuitStates {
				v := 0.0
				if s == cur {
					v = 1
				}
				o.ObserveFloat64(t.breakerState, v, metric.WithAttributes(k, BreakerStateAttr.String(s.String())))
			}
		}
		return nil
	}, t.learnedRate, t.breakerState)
}

// CircuitChanged counts a breaker state change in steady.breaker.transitions (by key, with the
// states in steady.breaker.from and steady.breaker.to). Pass it to the breaker:
// client.WithBreaker(breaker.WithObserver(tel.CircuitChanged)).
func (t *Telemetry) CircuitChanged(e breaker.Event) {
	t.circuitTransitions.Add(context.Background(), 1, metric.WithAttributes(t.keyAttr(e.Key),
		attribute.String("steady.breaker.from", e.From.String()), attribute.String("steady.breaker.to", e.To.String())))
}

// LearnerChanged counts a learner transition in steady.learner.transitions (by key, with the
// strategy in charge and its state in steady.learner.strategy and steady.learner.state). Pass it to
// the learner: client.WithLearner(learn.WithObserver(tel.LearnerChanged)). It is quick, as
// learn.WithObserver requires.
func (t *Telemetry) LearnerChanged(e learn.Event) {
	t.learnerTransitions.Add(context.Background(), 1, metric.WithAttributes(t.keyAttr(e.Key),
		attribute.String("steady.learner.strategy", e.Strategy), attribute.String("steady.learner.state", e.State)))
}
