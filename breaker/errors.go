package breaker

import (
	"errors"
	"fmt"
	"time"
)

// ErrCircuitOpen is the sentinel every *OpenError matches with errors.Is.
var ErrCircuitOpen = errors.New("breaker: circuit open")

// ErrInvalidOption reports an Option with an unusable value; New's errors wrap it.
var ErrInvalidOption = errors.New("breaker: invalid option")

// OpenError is returned for a request refused because its key's circuit is open (or half-open with
// every probe place taken): in FailFast mode, or in Pause mode when the request's context ends
// before the circuit would let it go. Nothing was sent; the Transport closed the request body. It
// matches ErrCircuitOpen with errors.Is.
type OpenError struct {
	// Key is the circuit's key.
	Key string
	// State is Open or HalfOpen.
	State State
	// Until is when the cool-down ends; the zero time in HalfOpen, where the probes decide.
	Until time.Time
}

// Error describes the refusal.
func (e *OpenError) Error() string {
	if e.State == HalfOpen {
		return fmt.Sprintf("breaker: circuit of %q is half-open and its probes are in flight", e.Key)
	}
	return fmt.Sprintf("breaker: circuit of %q is open until %s", e.Key, e.Until.Format(time.RFC3339Nano))
}

// Is reports whether target is ErrCircuitOpen.
func (e *OpenError) Is(target error) bool { return target == ErrCircuitOpen }
