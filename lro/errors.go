package lro

import (
	"context"
	"errors"
	"fmt"
)

var (
	// ErrNoStatusURL: the response that started the operation names no status resource (no
	// Operation-Location or Azure-AsyncOperation, nor a Location on a 202), and Done did not
	// find it done.
	ErrNoStatusURL = errors.New("lro: response names no status URL")
	// ErrStatus: the response that started the operation, or a poll, has a status that is neither
	// 2xx nor a redirect the client followed (after the client's own retries). *Error.StatusCode
	// says which.
	ErrStatus = errors.New("lro: error status")
	// ErrWouldExceedDeadline: the wait before the next poll would pass the context's deadline, so
	// Wait gave up without waiting. It matches context.DeadlineExceeded too.
	ErrWouldExceedDeadline error = wouldExceedDeadline{}
	// ErrInvalidOption is matched by the error of an unusable Option; the text names it.
	ErrInvalidOption = errors.New("lro: invalid option")
	// ErrNilArgument: Wait was given a nil client, response or Done function.
	ErrNilArgument = errors.New("lro: nil argument")
)

type wouldExceedDeadline struct{}

func (wouldExceedDeadline) Error() string {
	return "lro: the next poll would pass the context's deadline"
}

// Is makes ErrWouldExceedDeadline match context.DeadlineExceeded.
func (wouldExceedDeadline) Is(target error) bool { return target == context.DeadlineExceeded }

// Error is the error of a Wait that did not obtain a result: which operation, how far it got,
// and why (Err, matchable through Unwrap).
type Error struct {
	// URL is the status resource's URL ("" when none was found).
	URL string
	// Polls counts the polls sent.
	Polls int
	// StatusCode is the status of the last response (the one that started the operation when
	// Polls is 0); 0 when the last poll obtained none.
	StatusCode int
	// Err is the cause.
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	if e.URL == "" {
		return fmt.Sprintf("lro: operation not followed (status %d): %v", e.StatusCode, e.Err)
	}
	return fmt.Sprintf("lro: operation %s after %d polls (last status %d): %v", e.URL, e.Polls, e.StatusCode, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
