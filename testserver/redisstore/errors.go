package redisstore

import (
	"errors"
	"fmt"
	"time"
)

// Errors of the Redis store, matchable with errors.Is. Checks the store cannot decide exactly wrap
// ErrUnsupported in a *CheckError; a malformed check wraps testserver.ErrInvalidCheck; a store
// used after Close returns testserver.ErrClosed; a bad option value is a *testserver.OptionError
// matching testserver.ErrInvalidOption.
var (
	// ErrUnsupported: a check's algorithm or parameters are outside what the Lua script decides
	// exactly (see the package documentation's "Exact arithmetic" for the bounds).
	ErrUnsupported = errors.New("redisstore: check not supported")
	// ErrCrossSlot: with a Redis Cluster (or Ring) client, the checks of one Apply have different
	// hash tags, so their keys may live on different nodes and cannot be decided by one script.
	ErrCrossSlot = errors.New("redisstore: checks of one request have different hash tags")
	// ErrReply: Redis answered the script with a reply of the wrong shape (for example through a
	// proxy that rewrites replies). It counts as a Redis failure.
	ErrReply = errors.New("redisstore: unexpected script reply")
)

// CheckError reports a check the store cannot decide: which rule, which parameter, and why. It
// matches ErrUnsupported (or the cause it wraps) with errors.Is.
type CheckError struct {
	// Rule is the check's rule name.
	Rule string
	// Field names the offending parameter, such as "window" or "burst*window".
	Field string
	// Value is the offending value as text.
	Value string
	// Err is the cause (ErrUnsupported, possibly wrapped with detail).
	Err error
}

// Error names the rule, the parameter and the bound it breaks.
func (e *CheckError) Error() string {
	return fmt.Sprintf("redisstore: rule %q: %s %s: %v", e.Rule, e.Field, e.Value, e.Err)
}

// Unwrap returns the cause.
func (e *CheckError) Unwrap() error { return e.Err }

// TimeoutError reports a round trip to Redis that missed the store's deadline (WithTimeout): its
// decisions were decided by policy. The error hook (WithErrorHook) receives it; it matches
// context.DeadlineExceeded when the cause does.
type TimeoutError struct {
	// Timeout is the deadline the round trip had.
	Timeout time.Duration
	// Err is what the client returned.
	Err error
}

// Error says that Redis did not answer within the deadline.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("redisstore: no answer within %v: %v", e.Timeout, e.Err)
}

// Unwrap returns the client's error.
func (e *TimeoutError) Unwrap() error { return e.Err }
