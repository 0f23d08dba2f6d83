package breaker

import "fmt"

// State is the state of one key's circuit.
type State int

// The states of a circuit.
const (
	// Closed: requests go, and their outcomes are counted.
	Closed State = iota
	// Open: requests are held back (Pause) or refused (FailFast) until the cool-down ends.
	Open
	// HalfOpen: a bounded number of probes go; their outcomes decide between Closed and Open.
	HalfOpen
)

// String returns "closed", "open", "half-open", or "State(n)".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Outcome is what one request's result says about the server.
type Outcome int

// The outcomes a request records.
const (
	// Success: the server answered as a working server does.
	Success Outcome = iota
	// Failure: the server failed (a 5xx, a transport error).
	Failure
	// Ignored: the result says nothing about the server (the caller gave up, a local refusal).
	Ignored
)

// String returns "success", "failure", "ignored", or "Outcome(n)".
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Ignored:
		return "ignored"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}
