package client

import "errors"

// ErrInvalidOption is matched (errors.Is) by the error of an option the stack cannot use, such as a
// negative rate. The error's text names the option and the bad value.
var ErrInvalidOption = errors.New("client: invalid option")

// ErrNilRequest is returned by RoundTrip for a nil request.
var ErrNilRequest = errors.New("client: nil request")
