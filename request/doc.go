// Package request carries per-request settings of steady's stack in a request's context, so that one
// call can differ from the client's defaults without a second client:
//
//	ctx = request.WithAttempts(ctx, 1)                       // this call is not retried
//	ctx = request.WithMaxWait(ctx, 5*time.Second)            // nor waits long for its host's pause or pace
//	ctx = request.WithAttemptTimeout(ctx, 2*time.Second)     // each attempt has 2 s for its response headers
//	ctx = request.WithKey(ctx, "tenant-42")                  // paced and paused as tenant-42, not its host
//	ctx = request.WithCost(ctx, 250)                         // weighs 250 (e.g. tokens) for a pacer that weighs
//	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
//
// The layers read them: retry (attempts, attempt timeout), throttle (max wait, key; the cost is
// carried for a limiter that weighs requests, steady's own limiters count every request as one), and
// the breaker (key). A request's priority in the queue is set the same way, with
// queue.WithPriority, which predates this package and stays where the queue reads it.
//
// # Why one package
//
// The settings live here, not each in the package that reads it, because several layers read the
// same one (the key: throttle and breaker), because their natural names are taken by the
// packages' own options (retry.WithMaxAttempts configures a Transport; request.WithAttempts one
// call), and because a user finds every per-request control on one page. The package imports only
// the standard library, so every layer can read it without an import cycle.
//
// # Bad values
//
// A setter never panics. A value it cannot use (attempts below 1, a negative duration, an empty
// key, a cost below 1) is not stored; it is recorded, and the first layer of the stack that reads
// the settings fails the request with an error matching ErrInvalid (closing its body, sending
// nothing). Settings are immutable: each setter returns a new context, and contexts derived from
// it see the same settings, so they are safe for concurrent use.
package request
