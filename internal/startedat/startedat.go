// Package startedat lets a RoundTripper tell the layer above it when it began an attempt, so that
// the layer above need not read the clock for it too. A read of the clock costs 30-55 ns on a
// virtual machine's clock source (kvm-clock), a tenth of the whole stack's cost per request: the
// retry layer needs a request's start only to bound its retries (retry.WithMaxElapsed), and the
// throttle below it reads the clock anyway, to book the request's slot.
package startedat

import (
	"net/http"
	"time"
)

// RoundTripper is a RoundTripper that also says when it began an attempt.
type RoundTripper interface {
	http.RoundTripper

	// RoundTripStartedAt sends req as RoundTrip does, and returns beside its results the instant
	// at which it began the attempt, before any wait of its own, read as time.Now reads it (with
	// a monotonic reading). Whenever it passed req on, the instant was read before it did. It is
	// zero only when it refused req without waiting and without passing it on: then the attempt
	// began a moment before it returned.
	RoundTripStartedAt(req *http.Request) (resp *http.Response, began time.Time, err error)
}
