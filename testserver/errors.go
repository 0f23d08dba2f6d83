package testserver

import (
	"errors"
	"fmt"
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrInvalidRule is matched by every rule validation error (see [RuleError]).
	ErrInvalidRule = errors.New("testserver: invalid rule")
	// ErrInvalidKey is matched by errors about a malformed [KeySpec].
	ErrInvalidKey = errors.New("testserver: invalid key spec")
	// ErrInvalidMode is matched by errors about an unknown [Mode].
	ErrInvalidMode = errors.New("testserver: invalid mode")
	// ErrDuplicateRule is matched when two rules share a name.
	ErrDuplicateRule = errors.New("testserver: duplicate rule name")
	// ErrInvalidOption is matched by errors about a bad option value.
	ErrInvalidOption = errors.New("testserver: invalid option")
	// ErrServerOption is returned when an option that only a [Server] understands is passed to
	// [NewLimiter] or [Middleware].
	ErrServerOption = errors.New("testserver: option applies to Server only")
	// ErrClosed is returned by a [Limiter] or [Store] used after Close.
	ErrClosed = errors.New("testserver: closed")
	// ErrUnknownRule is returned by [Limiter.DecideKey] for a rule name the limiter does not have.
	ErrUnknownRule = errors.New("testserver: unknown rule")
)

// RuleError reports one invalid field of one rule. It matches [ErrInvalidRule] and its cause
// (for example algorithm.ErrInvalidLimit or [ErrInvalidKey]) with errors.Is.
type RuleError struct {
	// Index is the rule's position in the list it was given in.
	Index int
	// Rule is the rule's name ("" if it has none).
	Rule string
	// Field is the JSON name of the bad field, such as "limit" or "tiers[user:7].window".
	Field string
	// Value is the offending value as text.
	Value string
	// Err is the cause.
	Err error
}

// Error names the rule, the field and the bad value.
func (e *RuleError) Error() string {
	return fmt.Sprintf("testserver: rule %d (%q): field %s = %q: %v", e.Index, e.Rule, e.Field, e.Value, e.Err)
}

// Unwrap returns [ErrInvalidRule] and the cause, so errors.Is matches both.
func (e *RuleError) Unwrap() []error { return []error{ErrInvalidRule, e.Err} }

// OptionError reports a bad option value. It matches [ErrInvalidOption] or [ErrServerOption].
type OptionError struct {
	// Option is the option's constructor name, such as "WithIPv6Prefix".
	Option string
	// Value is the offending value as text.
	Value string
	// Err is the cause.
	Err error
}

// Error names the option and the bad value.
func (e *OptionError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("testserver: %s: %v", e.Option, e.Err)
	}
	return fmt.Sprintf("testserver: %s(%s): %v", e.Option, e.Value, e.Err)
}

// Unwrap returns the cause.
func (e *OptionError) Unwrap() error { return e.Err }
