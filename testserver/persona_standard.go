package testserver

import (
	"net/http"
	"strconv"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// ietfPersona answers with the IETF draft fields alone (RateLimit-Policy, RateLimit) and
// Retry-After, as a server following draft-ietf-httpapi-ratelimit-headers does.
type ietfPersona struct{}

func (ietfPersona) algorithm() string { return "" }

func (ietfPersona) admitted(h http.Header, v personaView) {
	if v.headOK {
		ratelimitheader.Write(h, v.head.fields(0))
		dropLegacy(h)
	}
}

func (ietfPersona) denied(w http.ResponseWriter, v personaView) {
	h := w.Header()
	ratelimitheader.Write(h, v.head.fields(v.retry))
	dropLegacy(h)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(v.status)
	_, _ = w.Write([]byte(http.StatusText(v.status) + "\n"))
}

// dropLegacy removes the X-RateLimit-* triple ratelimitheader.Write sets beside the IETF fields.
func dropLegacy(h http.Header) {
	delete(h, ratelimitheader.HeaderXLimit)
	delete(h, ratelimitheader.HeaderXRemaining)
	delete(h, ratelimitheader.HeaderXReset)
}

// xRateLimitPersona answers with the X-RateLimit-* triple alone, its reset a Unix time in seconds
// (the most common form in the wild), and Retry-After on a denial.
type xRateLimitPersona struct{}

func (xRateLimitPersona) algorithm() string { return "" }

func (xRateLimitPersona) admitted(h http.Header, v personaView) {
	if v.headOK {
		writeXRateLimit(h, v)
	}
}

func (xRateLimitPersona) denied(w http.ResponseWriter, v personaView) {
	h := w.Header()
	writeXRateLimit(h, v)
	h.Set("Retry-After", strconv.FormatInt(ceilSeconds(v.retry, 1), 10))
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(v.status)
	_, _ = w.Write([]byte(http.StatusText(v.status) + "\n"))
}

func writeXRateLimit(h http.Header, v personaView) {
	setDate(h, v.now)
	h.Set("X-RateLimit-Limit", strconv.FormatInt(v.head.Limit, 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(v.head.Remaining, 10))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(unixCeil(v.now, v.head.Reset), 10))
}

// nonePersona answers a denial with the status alone, and admitted requests with no rate-limit
// header: a server that says nothing.
type nonePersona struct{}

func (nonePersona) algorithm() string                           { return "" }
func (nonePersona) admitted(http.Header, personaView)           {}
func (nonePersona) denied(w http.ResponseWriter, v personaView) { w.WriteHeader(v.status) }
