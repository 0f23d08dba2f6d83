package testserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
)

// HeaderShadow is the header that marks a response a shadow-mode rule would have denied; its
// value is [ShadowWouldDeny].
const (
	HeaderShadow    = "Steady-Shadow"
	ShadowWouldDeny = "would-deny"
)

// ProblemType is the "type" member of throttled responses' problem+json bodies.
const ProblemType = "about:blank"

// Problem is the RFC 9457 application/problem+json body of a throttled response.
type Problem struct {
	// Type is [ProblemType].
	Type string `json:"type"`
	// Title is the status text, such as "Too Many Requests".
	Title string `json:"title"`
	// Status is the response's status code.
	Status int `json:"status"`
	// Detail says which limit was exceeded and when to retry.
	Detail string `json:"detail"`
	// RetryAfter is the Retry-After header's value: whole seconds, rounded up, at least 1.
	RetryAfter int64 `json:"retry_after"`
	// Policy is the name of the rule that denied the request.
	Policy string `json:"policy,omitempty"`
}

// headline picks the rule a response advertises: when denied, the denying rule with the longest
// RetryAfter; when admitted, the enforcing rule with the fewest remaining (shadow rules only when
// no other rule matched). ok is false when no rule matched.
func (res *Result) headline() (RuleResult, bool) {
	best, found := -1, false
	for i := range res.Rules {
		rr := &res.Rules[i]
		if !res.Allowed {
			if rr.Allowed || rr.Shadowed {
				continue
			}
			if best < 0 || rr.RetryAfter > res.Rules[best].RetryAfter {
				best = i
			}
			continue
		}
		enforcing := rr.Mode != ModeShadow
		if best < 0 {
			best, found = i, enforcing
			continue
		}
		if enforcing && (!found || rr.Remaining < res.Rules[best].Remaining) {
			best, found = i, true
		}
	}
	if best < 0 {
		return RuleResult{}, false
	}
	return res.Rules[best], true
}

// fields converts a rule's result into the codec's Fields.
func (rr RuleResult) fields(retryAfter time.Duration) ratelimitheader.Fields {
	return ratelimitheader.Fields{
		Policy:     rr.Rule,
		Limit:      rr.Limit,
		Window:     rr.Window,
		Remaining:  rr.Remaining,
		Reset:      rr.Reset,
		RetryAfter: retryAfter,
	}
}

// writeAdmittedHeaders sets the headers of an admitted response.
func (l *Limiter) writeAdmittedHeaders(h http.Header, res *Result, now time.Time) {
	if res.Shadowed {
		h.Set(HeaderShadow, ShadowWouldDeny)
	}
	if !l.cfg.headers {
		return
	}
	if p := l.cfg.persona; p != nil {
		c := res.clone() // the view keeps it: res's Rules may live on the middleware's stack
		p.admitted(h, l.personaView(&c, now))
		return
	}
	if rr, ok := res.headline(); ok {
		ratelimitheader.Write(h, rr.fields(0))
	}
}

// writeDenied answers a throttled request.
func (l *Limiter) writeDenied(w http.ResponseWriter, res *Result, now time.Time) {
	status := l.cfg.status
	if !l.cfg.headers {
		w.WriteHeader(status)
		return
	}
	if p := l.cfg.persona; p != nil {
		c := res.clone() // as in writeAdmittedHeaders
		p.denied(w, l.personaView(&c, now))
		return
	}
	retry := max(res.RetryAfter, time.Nanosecond)
	rr, _ := res.headline()
	h := w.Header()
	ratelimitheader.Write(h, rr.fields(retry))
	secs, _ := strconv.ParseInt(ratelimitheader.FormatRetryAfter(retry), 10, 64)
	p := Problem{
		Type:       ProblemType,
		Title:      http.StatusText(status),
		Status:     status,
		Detail:     fmt.Sprintf("rate limit %q exceeded (%d per %v); retry in %d s", rr.Rule, rr.Limit, rr.Window, secs),
		RetryAfter: secs,
		Policy:     rr.Rule,
	}
	body, _ := json.Marshal(p)
	body = append(body, '\n')
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeUnavailable answers 503 with a problem+json body: for a request the limiter could not
// decide (store failure, closed limiter) or whose wait was cut short.
func writeUnavailable(w http.ResponseWriter, detail string) {
	p := Problem{
		Type:   ProblemType,
		Title:  http.StatusText(http.StatusServiceUnavailable),
		Status: http.StatusServiceUnavailable,
		Detail: detail,
	}
	body, _ := json.Marshal(p)
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}
