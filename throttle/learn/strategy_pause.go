package learn

import "fmt"

// pauseStrategy is in charge while the server's last Retry-After runs: nothing is sent until it
// ends (the Throttle pauses the key too; the learner's pacer holds so that the requests waiting
// behind the pause go at the next strategy's pace when it ends, not in a burst).
type pauseStrategy struct{}

func (pauseStrategy) name() string { return "pause" }

func (pauseStrategy) state() string { return "holding" }

func (pauseStrategy) observe(t int64, s *Signal, m *model) string {
	if !s.HasRetry || s.RetryAfter <= 0 {
		return ""
	}
	ra := s.RetryAfter
	if m.maxPause >= 0 {
		ra = min(ra, m.maxPause)
	}
	if ra <= 0 {
		return ""
	}
	until := s.Answered + ra
	if until <= m.pauseUntil {
		return ""
	}
	running := m.pauseUntil > t
	if !running {
		m.pausePrev = m.pauseUntil
	}
	m.pauseUntil = until
	if running {
		// The answers to the requests in flight with the one that drew the pause bring their own
		// Retry-After a moment later: the pause moves, silently (one event per pause, not one
		// per answer).
		return ""
	}
	if ra < s.RetryAfter {
		return fmt.Sprintf("paused %v by Retry-After (%v asked, above the bound)", durationOf(ra), durationOf(s.RetryAfter))
	}
	return fmt.Sprintf("paused %v by Retry-After", durationOf(ra))
}

func (pauseStrategy) drives(t int64, m *model) bool { return m.pauseUntil > t }

func (pauseStrategy) plan(t int64, m *model) plan { return plan{hold: m.pauseUntil} }
