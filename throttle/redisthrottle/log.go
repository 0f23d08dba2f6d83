package redisthrottle

import (
	"context"
	"log/slog"
)

// logLaw logs the law's events at Debug level (WithLogger), with the pace they leave. The law is
// held.
func (l *Limiter) logLaw(events ...string) {
	lg := l.cfg.logger
	if lg == nil || !lg.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	for _, ev := range events {
		if ev != "" {
			lg.Debug(l.keys[0]+": "+ev, "state", l.law.State(), "pace", l.law.Rate(), "alone", l.alone, "process", l.id)
		}
	}
}

// logDown logs that Redis became unreachable, with err and the local pace the fallback takes.
func (l *Limiter) logDown(err error) {
	if lg := l.cfg.logger; lg != nil {
		lg.Warn(l.keys[0]+": Redis unreachable: pacing locally until it answers", "error", err,
			"pace", l.Rate()*l.share(), "share", l.share(), "recheck", l.cfg.recheck)
	}
}

// logUp logs that Redis answers again.
func (l *Limiter) logUp() {
	if lg := l.cfg.logger; lg != nil {
		lg.Info(l.keys[0]+": Redis answers again: pacing shared", "pace", l.Rate())
	}
}
