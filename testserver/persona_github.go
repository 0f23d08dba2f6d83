package testserver

import (
	"net/http"
	"strconv"
	"sync/atomic"
)

// gitHubPersona answers as GitHub's REST API (docs.github.com, "Rate limits for the REST API"):
// x-ratelimit-* on every response, the primary limit exceeded as a 403 with remaining 0 and the
// reset in Unix seconds, a secondary limit as a 403 with retry-after and GitHub's message. The
// first matching rule is the primary limit ("core"); any later rule is a secondary limit. GitHub's
// primary limit is a window that resets at x-ratelimit-reset: fixed-window by default.
type gitHubPersona struct{}

// gitHubRequestID numbers X-GitHub-Request-Id values.
var gitHubRequestID atomic.Int64

func (gitHubPersona) algorithm() string { return "fixed-window" }

func (gitHubPersona) headers(h http.Header, v personaView) {
	setDate(h, v.now)
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Request-Id", "STEADY:"+strconv.FormatInt(gitHubRequestID.Add(1), 16))
	if !v.primaryOK {
		return
	}
	p := v.primary
	h.Set("X-RateLimit-Limit", strconv.FormatInt(p.Limit, 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(p.Remaining, 10))
	h.Set("X-RateLimit-Used", strconv.FormatInt(max(p.Limit-p.Remaining, 0), 10))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(unixCeil(v.now, p.Reset), 10))
	h.Set("X-RateLimit-Resource", "core")
}

func (g gitHubPersona) admitted(h http.Header, v personaView) { g.headers(h, v) }

// gitHubError is GitHub's error body.
type gitHubError struct {
	Message          string `json:"message"`
	DocumentationURL string `json:"documentation_url"`
}

func (g gitHubPersona) denied(w http.ResponseWriter, v personaView) {
	h := w.Header()
	g.headers(h, v)
	if v.primaryOK && !v.primary.Allowed && !v.primary.Shadowed {
		// The primary limit: remaining is 0 and x-ratelimit-reset says when; no retry-after.
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", strconv.FormatInt(v.primary.Limit, 10))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(unixCeil(v.now, max(v.primary.RetryAfter, v.primary.Reset)), 10))
		writeJSON(w, http.StatusForbidden, gitHubError{
			Message:          "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.",
			DocumentationURL: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
		})
		return
	}
	h.Set("Retry-After", strconv.FormatInt(ceilSeconds(v.retry, 1), 10))
	writeJSON(w, http.StatusForbidden, gitHubError{
		Message:          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
		DocumentationURL: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
	})
}
