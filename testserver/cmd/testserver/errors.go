package main

import (
	"errors"
	"fmt"
)

// errHelp is returned by parseArgs when the user asked for -h or -help; the command prints the
// usage and exits 0.
var errHelp = errors.New("help requested")

// usageError is a bad command line or configuration file: the command prints it on one line and
// exits 2. Flag names the flag (without the dash) and Value the offending value when the error is
// about one flag; otherwise only Err is printed.
type usageError struct {
	Flag  string
	Value string
	Err   error
}

// Error names the flag and the bad value.
func (e *usageError) Error() string {
	if e.Flag == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("invalid value %q for -%s: %v", e.Value, e.Flag, e.Err)
}

// Unwrap returns the cause.
func (e *usageError) Unwrap() error { return e.Err }

// badFlag returns a usageError about the value of one flag.
func badFlag(flag, value string, format string, args ...any) error {
	return &usageError{Flag: flag, Value: value, Err: fmt.Errorf(format, args...)}
}

// usage wraps err as a usageError without a flag.
func usage(err error) error { return &usageError{Err: err} }
