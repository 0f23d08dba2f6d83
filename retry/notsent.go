package retry

import (
	"errors"
	"net"
	"net/http"

	"github.com/steadyhttp/steady/internal/errorsas"
)

// NotSent reports whether a transport error proves that the request never left the client, so that
// sending it again cannot make the server act twice, whatever its method:
//
//   - dialling failed: a *net.OpError with Op "dial" (connection refused, network unreachable, a
//     dial timeout) or "proxyconnect" (the proxy could not be reached or refused the tunnel);
//   - the host name could not be resolved (a *net.DNSError);
//   - an HTTP/2 transport had no connection to send on (an error with the
//     IsHTTP2NoCachedConnError method, as golang.org/x/net/http2 and net/http's bundled copy return);
//   - the RoundTripper declined the request (http.ErrSkipAltProtocol).
//
// net/http itself resends a request that failed with nothing written on a reused connection
// (its unexported nothingWrittenError), and when it gives up it returns the error it wrapped, which
// cannot be told apart from the same error after part of the request was written (a reset during
// the write). Those errors, like every error not listed above, report false: an error that does not
// prove the request unsent is taken as possibly sent. NotSent does not say whether the failure may
// pass (see RetryableError); it never compares error strings.
func NotSent(err error) bool {
	if err == nil {
		return false
	}
	if opErr, ok := errorsas.AsType[*net.OpError](err); ok && (opErr.Op == "dial" || opErr.Op == "proxyconnect") {
		return true
	}
	if _, ok := errorsas.AsType[*net.DNSError](err); ok {
		return true
	}
	if noCachedConn(err) {
		return true
	}
	return errors.Is(err, http.ErrSkipAltProtocol)
}

// noCachedConn reports whether err is an HTTP/2 transport's "no cached connection" error, which it
// marks with an IsHTTP2NoCachedConnError method.
func noCachedConn(err error) bool {
	_, ok := errorsas.AsType[interface {
		error
		IsHTTP2NoCachedConnError()
	}](err)
	return ok
}
