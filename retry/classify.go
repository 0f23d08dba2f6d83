package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/steadyhttp/steady/internal/errorsas"
)

// Classifier reports whether the outcome of one attempt is a failure worth retrying: resp is the
// attempt's response (nil when err is not nil) and err its transport error. It decides only about
// the outcome; whether the request may be sent again (method, Idempotency-Key, replayable body),
// the budget and the limits are checked by the Transport regardless. It must be safe for
// concurrent use and must not read or close resp.Body.
//
// The Transport never asks the classifier about an attempt whose request context has ended: that
// outcome is never retried.
type Classifier func(resp *http.Response, err error) bool

// DefaultStatuses returns the statuses retried by default: 429 Too Many Requests, 502 Bad Gateway,
// 503 Service Unavailable and 504 Gateway Timeout. Each call returns a new slice.
func DefaultStatuses() []int {
	return []int{
		http.StatusTooManyRequests,
		http.StatusBadGateway,
		http.StatusServiceUnavailable,
		http.StatusGatewayTimeout,
	}
}

// DefaultClassifier is the default Classifier: a response with one of DefaultStatuses, or a
// transport error for which RetryableError reports true.
func DefaultClassifier(resp *http.Response, err error) bool {
	if err != nil {
		return RetryableError(err)
	}
	return resp != nil && defaultStatusSet.has(resp.StatusCode)
}

var defaultStatusSet = newStatusSet(DefaultStatuses())

// statusSet is a set of HTTP status codes 100..599 as a bitmap: membership costs no allocation.
type statusSet [10]uint64

func newStatusSet(codes []int) statusSet {
	var s statusSet
	for _, c := range codes {
		if validStatus(c) {
			s[c/64] |= 1 << (c % 64)
		}
	}
	return s
}

func validStatus(code int) bool { return code >= 100 && code <= 599 }

func (s *statusSet) has(code int) bool {
	return validStatus(code) && s[code/64]&(1<<(code%64)) != 0
}

// RetryableError reports whether a transport error means the attempt obtained no response for a
// reason that may pass: the connection was refused, reset or aborted, the server closed it before
// answering (EOF), dialling, reading or writing failed (*net.OpError with Op "dial", "read",
// "write" or "proxyconnect"), a transport timeout expired (a net.Error whose Timeout is true), a
// DNS lookup failed temporarily, or an HTTP/2 transport had no connection to send on.
//
// It reports false for nil, for context cancellation and deadline errors (a caller that gave up is
// never retried), for TLS failures (certificate verification, alerts, a server not speaking TLS),
// for a host that does not exist, and for every error it does not recognise: an unknown error is
// not assumed to be transient. It never compares error strings.
func RetryableError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if tlsFailure(err) {
		return false
	}
	if dnsErr, ok := errorsas.AsType[*net.DNSError](err); ok {
		return !dnsErr.IsNotFound
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ETIMEDOUT):
		return true
	}
	if noCachedConn(err) {
		return true
	}
	if opErr, ok := errorsas.AsType[*net.OpError](err); ok {
		switch opErr.Op {
		case "dial", "read", "write", "proxyconnect":
			return true
		}
	}
	if netErr, ok := errorsas.AsType[net.Error](err); ok && netErr.Timeout() {
		return true
	}
	return false
}

func tlsFailure(err error) bool {
	if _, ok := errorsas.AsType[*tls.CertificateVerificationError](err); ok {
		return true
	}
	if _, ok := errorsas.AsType[x509.UnknownAuthorityError](err); ok {
		return true
	}
	if _, ok := errorsas.AsType[x509.HostnameError](err); ok {
		return true
	}
	if _, ok := errorsas.AsType[x509.CertificateInvalidError](err); ok {
		return true
	}
	if _, ok := errorsas.AsType[tls.RecordHeaderError](err); ok {
		return true
	}
	if _, ok := errorsas.AsType[tls.AlertError](err); ok {
		return true
	}
	return false
}
