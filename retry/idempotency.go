package retry

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// HeaderIdempotencyKey is the request header that makes a POST or PATCH safe to send twice: a server
// that honours it processes each key once (IETF draft "The Idempotency-Key HTTP Header Field").
const HeaderIdempotencyKey = "Idempotency-Key"

// headerXIdempotencyKey is the older spelling that net/http's Transport also honours.
const headerXIdempotencyKey = "X-Idempotency-Key"

// IdempotentMethod reports whether an HTTP method is idempotent by RFC 9110: GET, HEAD, OPTIONS,
// TRACE, PUT and DELETE (and "", which net/http treats as GET).
func IdempotentMethod(method string) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace,
		http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// HasIdempotencyKey reports whether h carries an Idempotency-Key (or X-Idempotency-Key) header,
// even an empty one: a caller that set it knows what it means.
func HasIdempotencyKey(h http.Header) bool {
	if h == nil {
		return false
	}
	_, ok := h[HeaderIdempotencyKey]
	if !ok {
		_, ok = h[headerXIdempotencyKey]
	}
	return ok
}

// MaySendAgain reports whether req may be sent once more after an attempt that obtained resp
// (nil when the attempt obtained no response), as far as the method allows: always for an
// idempotent method or a request with an Idempotency-Key; for any other method (POST, PATCH, ...)
// only when resp proves the server did not process the request: a 429, or a 503 with a valid
// Retry-After. hasRetryAfter is whether resp carries a valid Retry-After.
//
// It does not look at the body (see Replayable) nor at whether the outcome is a failure. An attempt
// that obtained no response because the request was never sent (see NotSent) may be sent again
// whatever the method; MaySendAgainAfter covers both cases.
func MaySendAgain(req *http.Request, resp *http.Response, hasRetryAfter bool) bool {
	if IdempotentMethod(req.Method) || HasIdempotencyKey(req.Header) {
		return true
	}
	if resp == nil {
		return false
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
		return hasRetryAfter
	}
	return false
}

// MaySendAgainAfter is MaySendAgain for an attempt that obtained resp or failed with err: a request
// that NotSent(err) proves unsent may be sent again whatever its method; otherwise MaySendAgain
// decides.
func MaySendAgainAfter(req *http.Request, resp *http.Response, err error, hasRetryAfter bool) bool {
	if resp == nil && NotSent(err) {
		return true
	}
	return MaySendAgain(req, resp, hasRetryAfter)
}

// Replayable reports whether req's body can be sent again: it has no body, or it has GetBody.
func Replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// needsKey reports whether WithIdempotencyKeys adds a key to req: a method that is not idempotent,
// and no key set by the caller.
func needsKey(req *http.Request) bool {
	return !IdempotentMethod(req.Method) && !HasIdempotencyKey(req.Header)
}

// newIdempotencyKey returns a fresh random UUID (version 4) in its canonical text form.
func newIdempotencyKey() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never returns an error (it crashes the program instead)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}
