package learn

// Tuning holds every constant of the learner, each derived from the model in docs/learner.md: the
// measured round trip (RTT), its variation, the rate believed, and the requests in flight. A field
// is a multiple or a fraction of one of those, never a fixed number of milliseconds; the defaults
// (DefaultTuning) say why. The zero Tuning is not usable: start from DefaultTuning.
type Tuning struct {
	// Headroom is the fraction under a declared or estimated rate that the learner paces at: the
	// share of the spacing that absorbs the network's jitter bunching requests that left evenly.
	// Default 0.005: at 1,000/s a 1 ms spacing keeps 5 µs, the scheduling noise of a loaded host.
	Headroom float64
	// JitterMargin is how many RTT deviations (the smoothed mean deviation, as TCP's RTTVAR)
	// stand for the spread of a one-way trip: a request aimed at a server-side instant (a reset, a
	// place in a window) is sent that much late, and requests that left that much before an
	// answered one are counted as unseen by the server when it answered (they may have arrived
	// after it). Default 4, the multiple RFC 6298 puts on RTTVAR for a bound that a trip rarely
	// passes: for a uniform one-way jitter J the mean deviation of a round trip is about J/3, and
	// 4 of them cover J.
	JitterMargin float64
	// ThrottleBudget is the share of attempts the headerless learner may spend on 429s: after an
	// epoch it cruises below its estimate for cost/ThrottleBudget successes before it probes
	// again, cost being the epoch's throttles and at least one plus the requests in flight when it
	// was caught (which a probe cannot recall). Default 0.02, under the 3% goal.
	ThrottleBudget float64
	// DeclaredBudget is the share of attempts the declared strategy may spend on 429s where the
	// answers cannot show spare quota: a bucket that never says more than the jitter's reserve
	// left (a bucket of one), where a collision with another client and one with the client's own
	// jitter look alike. A share halved there climbs back to what it was over 1/DeclaredBudget
	// admitted answers, so that clients that collide once per climb spend one attempt in
	// 1/DeclaredBudget on it. Default 0.005, the goals' bound with honest headers: alone, a
	// collision the jitter caused costs its Retry-After and 77 spacings (200 answers at a share
	// climbing from a half take (2 ln 2)·200 = 277).
	DeclaredBudget float64
	// Backoff is the factor the headerless rate is cut by, below the admitted rate measured, on a
	// throttle epoch. Default 0.9: the pace averages (1+0.9)/2 = 95% of the limit through a
	// sawtooth, inside the 10% of elapsed time the goals allow, while a second throttle in the same
	// epoch is unlikely because the cut is below what the server just admitted.
	Backoff float64
	// ProbeGain is how far above its estimate the headerless learner probes, as a fraction of it.
	// Default 0.05: a limit that grew by 5% or more is found in one probe; a probe against an
	// unchanged limit costs at most its own requests in flight.
	ProbeGain float64
	// MeasureSuccesses is how many successes the admitted rate is measured over (the spacing of the
	// first and last of them). Default 8: the estimate's relative error from one late or early
	// arrival is 1/7, and at 1/s it is available after 8 seconds, not after 8 successes in one
	// second.
	MeasureSuccesses int
	// DistrustAfter is how many contradictions (throttles while the server's own headers said
	// quota remained for the request) before the server admits a whole declared quota after the
	// first make the learner stop believing the headers, for good. Default 2: one can be a race
	// with another client on the key; two before the quota it claims was ever admitted is a
	// server that over-claims.
	DistrustAfter int
	// WholeShare is the share of the last burst that must be admitted at once after a wall of
	// throttles for the headerless learner to believe the quota comes back whole (a window).
	// Default 0.5: a refilling bucket gives back one request per spacing, a window all of it.
	WholeShare float64
}

// DefaultTuning returns the defaults documented on each field.
func DefaultTuning() Tuning {
	return Tuning{
		Headroom:         0.005,
		JitterMargin:     4,
		ThrottleBudget:   0.02,
		DeclaredBudget:   0.005,
		Backoff:          0.9,
		ProbeGain:        0.05,
		MeasureSuccesses: 8,
		DistrustAfter:    2,
		WholeShare:       0.5,
	}
}
