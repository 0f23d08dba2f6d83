package redisthrottle

import "sync/atomic"

// Stats is what a Limiter has done since it was created. It is a plain value.
type Stats struct {
	// Rate is the pace in requests per second (see Limiter.Rate).
	Rate float64
	// Processes is the number of processes that used the key in the last LiveWindow, as last
	// counted in Redis (0 before the limiter first reached Redis).
	Processes int
	// PeakProcesses is the most processes counted at once since the limiter was created (a
	// process that finished drops out of Processes after LiveWindow).
	PeakProcesses int
	// Redis counts reservations booked in Redis.
	Redis int64
	// Fallback counts reservations booked with the local fallback because Redis was unreachable.
	Fallback int64
	// Errors counts failed Redis calls (errors and timeouts).
	Errors int64
	// Throttles counts throttled responses observed.
	Throttles int64
	// Cuts counts the throttled responses of this process that cut the rate (shared or local).
	Cuts int64
	// Returned counts cancelled reservations whose slot was given back; Lost those whose slot
	// could not be (a later one had been booked, or Redis failed), and missed slots booked again
	// (a pace that rose while this process did not know of it made them due before it heard).
	Returned, Lost int64
	// LastError is the last Redis failure, or nil.
	LastError error
}

// counters are the atomic counters behind Stats.
type counters struct {
	redis, fallback, errors, throttles, cuts, returned, lost atomic.Int64
}

// Stats reports what the limiter has done. It is safe for concurrent use.
func (l *Limiter) Stats() Stats {
	l.errMu.Lock()
	err := l.lastErr
	l.errMu.Unlock()
	return Stats{
		Rate:          l.Rate(),
		Processes:     int(l.live.Load()),
		PeakProcesses: int(l.peak.Load()),
		Redis:         l.stats.redis.Load(),
		Fallback:      l.stats.fallback.Load(),
		Errors:        l.stats.errors.Load(),
		Throttles:     l.stats.throttles.Load(),
		Cuts:          l.stats.cuts.Load(),
		Returned:      l.stats.returned.Load(),
		Lost:          l.stats.lost.Load(),
		LastError:     err,
	}
}
