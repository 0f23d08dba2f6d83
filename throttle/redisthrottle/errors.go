package redisthrottle

import "errors"

// Errors returned (wrapped, with the offending value) by New, Factory and ClientOptions. They are
// matchable with errors.Is.
var (
	// ErrNilClient reports a nil Redis client.
	ErrNilClient = errors.New("redisthrottle: nil Redis client")
	// ErrInvalidKey reports an empty key.
	ErrInvalidKey = errors.New("redisthrottle: key must not be empty")
	// ErrInvalidOption reports an Option with an unusable value (a rate that is not positive and
	// finite, a burst below 1, a non-positive duration, a share outside (0, 1], ...).
	ErrInvalidOption = errors.New("redisthrottle: invalid option")
	// ErrContextTimeoutDisabled reports a go-redis client created without
	// ContextTimeoutEnabled: such a client ignores the deadline of each call (it waits up to its
	// ReadTimeout, 3 s by default, on a Redis that hangs), so the limiter could not keep its
	// per-call deadline. Create the client from ClientOptions, or set ContextTimeoutEnabled: true.
	ErrContextTimeoutDisabled = errors.New("redisthrottle: the Redis client must have ContextTimeoutEnabled set")
)

// errUnexpectedReply reports a script reply of the wrong shape (a Redis that is not Redis).
var errUnexpectedReply = errors.New("redisthrottle: unexpected reply from a script")
