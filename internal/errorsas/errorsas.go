// Package errorsas holds AsType, the generic form of errors.As that the standard library gains
// only in Go 1.26 (errors.AsType). The module supports Go 1.25 too, so its packages call this one;
// once Go 1.25 is no longer supported, replace errorsas.AsType with errors.AsType and delete the
// package.
package errorsas

import "errors"

// AsType finds the first error in err's tree that matches type E, as errors.As does, and returns
// it with true; otherwise it returns the zero E and false. It is safe for concurrent use (it reads
// err only).
func AsType[E error](err error) (E, bool) {
	var target E
	ok := errors.As(err, &target)
	return target, ok
}
