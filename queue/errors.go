package queue

import (
	"errors"
	"fmt"
)

// Errors returned by the queue. They are matchable with errors.Is.
var (
	// ErrQueueFull is returned when a request finds no free place and the waiting line is full.
	ErrQueueFull = errors.New("queue: waiting line is full")
	// ErrClosed is returned by Acquire (and Transport.RoundTrip) after Close, including to requests
	// that were waiting when Close was called.
	ErrClosed = errors.New("queue: closed")
	// ErrInvalidPriority is returned when a request's context carries a Priority that is not one of
	// High, Normal or Low.
	ErrInvalidPriority = errors.New("queue: invalid priority")
	// ErrInvalidOption is wrapped by the *OptionError that New returns for a bad option value.
	ErrInvalidOption = errors.New("queue: invalid option")
	// ErrNilQueue is returned when a nil *Queue (or a Transport without a Queue) is used.
	ErrNilQueue = errors.New("queue: nil Queue")
	// ErrNilContext is returned by Acquire when it is given a nil context.
	ErrNilContext = errors.New("queue: nil context")
	// ErrNilRequest is returned by Transport.RoundTrip when it is given a nil request.
	ErrNilRequest = errors.New("queue: nil request")
)

// OptionError reports an option given a value it does not accept. It unwraps to ErrInvalidOption.
type OptionError struct {
	// Option is the name of the option, such as "WithMaxInFlight".
	Option string
	// Value is the rejected value.
	Value int
	// Reason says what the option accepts.
	Reason string
}

// Error describes the rejected option.
func (e *OptionError) Error() string {
	return fmt.Sprintf("queue: invalid option %s(%d): %s", e.Option, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidOption.
func (e *OptionError) Unwrap() error { return ErrInvalidOption }
