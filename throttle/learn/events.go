package learn

import (
	"context"
	"log/slog"
	"time"
)

// Event is one transition of a Learner: a belief that changed, a state a strategy entered, or a
// change of the strategy in charge.
type Event struct {
	Key      string    // the key the learner paces (WithKey)
	At       time.Time // when the response that caused it was observed
	Strategy string    // the strategy in charge when the answer came: declared, cycles, rate or startup (a pause overlays its hold on theirs); an "in charge:" event follows when the answer hands it over
	State    string    // its state
	Detail   string    // what changed and why, e.g. "declared 100/1m0s -> distrusted (2 throttles with quota said to remain)"
}

// emit reports an event to the observer and the logger; l.mu is held.
func (l *Learner) emit(at time.Time, detail string) {
	if l.cfg.observer == nil && l.cfg.logger == nil {
		return
	}
	e := Event{Key: l.cfg.key, At: at, Detail: detail}
	if l.cur != nil {
		e.Strategy, e.State = l.cur.name(), l.cur.state()
	}
	if l.cfg.observer != nil {
		l.cfg.observer(e)
	}
	if lg := l.cfg.logger; lg != nil && lg.Enabled(context.Background(), slog.LevelDebug) {
		lg.Debug(e.Key+": "+e.Detail, "strategy", e.Strategy, "state", e.State)
	}
}
