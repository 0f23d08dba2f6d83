package dialects

import (
	"bytes"
	"io"
	"net/http"
	"time"
)

// gitHub reads GitHub's REST and GraphQL APIs.
//
// Source: GitHub Docs, "Rate limits for the REST API"
// (https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api), sections
// "Checking the status of your rate limit" and "Exceeding the rate limit":
//
//   - every response carries x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-used,
//     x-ratelimit-reset ("The time at which the current rate limit window resets, in UTC epoch
//     seconds") and x-ratelimit-resource ("The rate limit resource that the request counted
//     against": core, search, graphql, ...);
//   - "If you exceed your primary rate limit, you will receive a 403 or 429 response, and the
//     x-ratelimit-remaining header will be 0. You should not retry your request until after the
//     time specified by the x-ratelimit-reset header.";
//   - "If you exceed a secondary rate limit, you will receive a 403 or 429 response and an error
//     message that indicates that you exceeded a secondary rate limit. If the retry-after response
//     header is present, you should not retry your request until after that many seconds has
//     elapsed. If the x-ratelimit-remaining header is 0, you should not retry your request until
//     after the time, in UTC epoch seconds, specified by the x-ratelimit-reset header. Otherwise,
//     wait for at least one minute before retrying."
//
// The primary limits are per hour (5,000 requests for a user, 60 unauthenticated; GraphQL 5,000
// points), the search limits per minute (30 search, 10 code_search): Window is filled in for
// those resources and left unknown for the others. A graphql quota counts UnitPoints.
//
// A secondary-limit 403 may carry remaining > 0: only its body ("You have exceeded a secondary rate
// limit", formerly "abuse detection mechanism") tells it from a permission error. So a 403 without
// retry-after and with quota left has up to githubBodyLimit bytes of its body read, and resp.Body
// restored over them. A 403 that is neither stays non-throttled (a permission error is final).
//
// Recognised by x-ratelimit-resource or an X-GitHub-* header (X-GitHub-Request-Id,
// X-GitHub-Media-Type), which GitHub sends on every API response.
type gitHub struct{}

// githubBodyLimit bounds the body read from a GitHub 403: GitHub's error bodies are a JSON object
// of a message and a documentation URL, a few hundred bytes; 4 KiB holds them with room to spare
// and costs nothing on a response that is read anyway.
const githubBodyLimit = 4 << 10

// secondaryMinimum is GitHub's "wait for at least one minute" for a secondary limit without
// retry-after and with quota left.
const secondaryMinimum = time.Minute

// Name returns "github".
func (gitHub) Name() string { return "github" }

// Read reads a GitHub response; ok is false without any GitHub header.
func (g gitHub) Read(resp *http.Response, now time.Time) (Reading, bool) {
	return readBuiltin(g, resp, now)
}

// readTo is Read with its quotas appended to quotas, not finished (see builtin).
func (g gitHub) readTo(resp *http.Response, now time.Time, quotas []Quota) (Reading, bool) {
	h := resp.Header
	if !has(h, "X-Ratelimit-Resource") && !has(h, "X-Github-Request-Id") && !has(h, "X-Github-Media-Type") {
		return Reading{}, false
	}
	return g.readForcedTo(resp, now, quotas), true
}

// readForcedTo reads resp as GitHub's, whatever its headers, its quota appended to quotas, not
// finished (see forcer).
func (gitHub) readForcedTo(resp *http.Response, now time.Time, quotas []Quota) Reading {
	h := resp.Header
	r := Reading{Dialect: "github", Quotas: quotas}
	resource := trimOWS(get(h, "X-Ratelimit-Resource"))
	q := Quota{Name: resource}
	switch resource {
	case "graphql":
		q.Unit, q.Window = UnitPoints, time.Hour
	case "core":
		q.Window = time.Hour
	case "search", "code_search":
		q.Window = time.Minute
	}
	q.WindowAssumed = q.Window > 0
	known := false
	if n, ok := parseCount(get(h, "X-Ratelimit-Limit")); ok && n > 0 {
		q.Limit, known = n, true
	}
	if n, ok := parseCount(get(h, "X-Ratelimit-Remaining")); ok {
		q.Remaining, q.HasRemaining, known = n, true, true
	} else if used, ok := parseCount(get(h, "X-Ratelimit-Used")); ok && q.Limit > 0 {
		q.Remaining, q.HasRemaining, known = max(q.Limit-used, 0), true, true
	}
	if d, at, ok := parseReset(get(h, "X-Ratelimit-Reset"), h, now); ok {
		q.Reset, q.ResetAt, q.HasReset, known = d, at, true, true
		q.ResetGrain = resetGrain(get(h, "X-Ratelimit-Reset"), h)
	}
	if known || resource != "" {
		r.Quotas = append(r.Quotas, q)
	}
	r.Bucket = resource

	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return r
	}
	switch ra, grain, ok := retryAfter(h, now); {
	case ok: // a secondary limit that says how long
		r.Throttled, r.RetryAfter, r.RetryAfterGrain, r.HasRetryAfter = true, ra, grain, true
	case q.HasRemaining && q.Remaining == 0: // the primary limit (or a secondary one at 0)
		r.Throttled = true
		if q.HasReset {
			r.RetryAfter, r.RetryAfterGrain, r.HasRetryAfter = q.Reset, q.ResetGrain, true
		} else {
			r.RetryAfter, r.HasRetryAfter = secondaryMinimum, true
		}
	case resp.StatusCode == http.StatusTooManyRequests || secondaryBody(resp):
		r.Throttled, r.RetryAfter, r.HasRetryAfter = true, secondaryMinimum, true
	}
	return r
}

// secondaryMarkers are the phrases of GitHub's secondary-limit error messages, lower-cased.
var secondaryMarkers = [...]string{"secondary rate limit", "abuse detection"}

// secondaryBody reads up to githubBodyLimit bytes of resp.Body, restores it, and reports whether
// they name a secondary rate limit.
func secondaryBody(resp *http.Response) bool {
	if resp.Body == nil || resp.Body == http.NoBody {
		return false
	}
	orig := resp.Body
	buf, err := io.ReadAll(io.LimitReader(orig, githubBodyLimit))
	rest := io.Reader(orig)
	if err != nil {
		rest = errReader{err}
	}
	resp.Body = restoredBody{Reader: io.MultiReader(bytes.NewReader(buf), rest), Closer: orig}
	lower := bytes.ToLower(buf)
	for _, m := range secondaryMarkers {
		if bytes.Contains(lower, []byte(m)) {
			return true
		}
	}
	return false
}

// restoredBody is a response body whose first bytes were read ahead: it reads them again, then
// the rest, and closes the original body.
type restoredBody struct {
	io.Reader
	io.Closer
}

// errReader returns err on every read: the rest of a body whose read-ahead failed.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
