package algorithm

import "errors"

// Errors returned for invalid parameters. They are wrapped with the offending value and matchable
// with errors.Is.
var (
	// ErrInvalidLimit: Config.Limit (or the limit given to Scale) is below 1.
	ErrInvalidLimit = errors.New("algorithm: limit must be at least 1")
	// ErrInvalidWindow: Config.Window is not positive.
	ErrInvalidWindow = errors.New("algorithm: window must be positive")
	// ErrInvalidBurst: Config.Burst is negative, or differs from the limit for an algorithm whose
	// burst is its limit.
	ErrInvalidBurst = errors.New("algorithm: invalid burst")
	// ErrUnknownAlgorithm: New was given a name not in Names, or Scale an Algorithm this package did
	// not create.
	ErrUnknownAlgorithm = errors.New("algorithm: unknown algorithm")
)
