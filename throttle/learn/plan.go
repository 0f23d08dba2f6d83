package learn

// plan is what the strategy in charge asks of the pacer: the spacing, a hold, a credit to spend at
// once, and a cap on requests in flight.
type plan struct {
	interval    int64 // nanoseconds per request; 0 = unpaced
	hold        int64 // no request before this instant; 0 = none
	credit      int64 // requests that may go at once (only applied when setCredit)
	setCredit   bool
	maxInFlight int // 0 = no cap
	// capWait is how long a request held back by the cap waits for an answer at most (0: the
	// learner's default, two smoothed round trips).
	capWait int64
	// A window: at most windowLimit requests in any window plus windowSlack (0: none).
	windowLimit         int
	window, windowSlack int64
	// burst is the most requests the server was seen to admit at once (0: not known): the
	// requests behind one that went late may close on it by burst-1 spacings at most, so that a
	// server that admits no two requests closer than its pace (a burst of one) is not sent two
	// closer than that after a late wake.
	burst int64
}

// strategy is one way of driving the pacer. The arbiter asks each, in precedence order, whether it
// can drive now, and the first that can is in charge; every strategy observes every signal, so the
// one that takes over next has its evidence.
type strategy interface {
	// name is the strategy's name in events and logs.
	name() string
	// state is the name of its current state.
	state() string
	// observe learns from one signal at t and returns a description of the transition it made,
	// or "" when its state did not change.
	observe(t int64, s *Signal, m *model) string
	// drives reports whether the strategy can be in charge at t.
	drives(t int64, m *model) bool
	// plan is what it asks of the pacer at t.
	plan(t int64, m *model) plan
}

// steadyStrategy is a strategy that can tell when its plan stays as it is through any number of
// quiet answers (Signal.quiet) that it observes without an event: the arbiter then does not
// re-apply it on every answer (the steady state of a server that says nothing and throttles
// nothing costs no re-plan).
type steadyStrategy interface {
	strategy
	// steady reports whether the plan stays the same through quiet answers observed without an
	// event, as long as the strategy drives.
	steady(m *model) bool
}
