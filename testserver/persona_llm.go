package testserver

import (
	"net/http"
	"strconv"
	"time"
)

// openAIPersona answers as OpenAI's API (platform.openai.com, "Rate limits"): the request quota in
// x-ratelimit-{limit,remaining,reset}-requests, the reset as a Go-style duration ("1s", "6m0s",
// "20ms") of the time until the quota is fully replenished, and a 429 with retry-after. The
// testserver counts requests only, so no token family is written. OpenAI's limits are refilled
// continuously: token-bucket by default.
type openAIPersona struct{}

func (openAIPersona) algorithm() string { return "token-bucket" }

func (openAIPersona) admitted(h http.Header, v personaView) {
	if v.headOK {
		writeOpenAI(h, v)
	}
}

// openAIError is OpenAI's error body.
type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

func (openAIPersona) denied(w http.ResponseWriter, v personaView) {
	h := w.Header()
	writeOpenAI(h, v)
	h.Set("Retry-After", strconv.FormatInt(ceilSeconds(v.retry, 1), 10))
	var body openAIError
	body.Error.Message = "Rate limit reached for requests per min (RPM): Limit " + strconv.FormatInt(perMinute(v), 10) +
		". Please try again in " + openAIDuration(v.retry) + "."
	body.Error.Type, body.Error.Code = "requests", "rate_limit_exceeded"
	writeJSON(w, http.StatusTooManyRequests, body)
}

func writeOpenAI(h http.Header, v personaView) {
	h.Set("X-Ratelimit-Limit-Requests", strconv.FormatInt(perMinute(v), 10))
	h.Set("X-Ratelimit-Remaining-Requests", strconv.FormatInt(v.head.Remaining, 10))
	h.Set("X-Ratelimit-Reset-Requests", openAIDuration(v.head.Reset))
}

// perMinute is the rule's quota stated per minute, as OpenAI and Anthropic state theirs (requests
// per minute, RPM): a rule of 20 per second is 1,200 per minute. A rule whose window is not a
// divisor or multiple of a minute is rounded down; never below 1.
func perMinute(v personaView) int64 {
	if v.head.Window <= 0 {
		return v.head.Limit
	}
	return max(1, int64(float64(v.head.Limit)*float64(time.Minute)/float64(v.head.Window)))
}

// openAIDuration formats d as OpenAI does: Go's Duration.String of d rounded up to the millisecond
// ("1s", "6m0s", "20ms", "1.5s").
func openAIDuration(d time.Duration) string {
	d = (max(d, 0) + time.Millisecond - 1).Truncate(time.Millisecond)
	return d.String()
}

// anthropicPersona answers as Anthropic's API (docs.anthropic.com, "Rate limits"): the request
// quota in anthropic-ratelimit-requests-{limit,remaining,reset}, the reset an RFC 3339 instant at
// which the quota is fully replenished, and a 429 with retry-after and Anthropic's error body.
// Anthropic documents a token bucket: token-bucket by default.
type anthropicPersona struct{}

func (anthropicPersona) algorithm() string { return "token-bucket" }

func (anthropicPersona) admitted(h http.Header, v personaView) {
	if v.headOK {
		writeAnthropic(h, v)
	}
}

// anthropicError is Anthropic's error body.
type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (anthropicPersona) denied(w http.ResponseWriter, v personaView) {
	h := w.Header()
	writeAnthropic(h, v)
	h.Set("Retry-After", strconv.FormatInt(ceilSeconds(v.retry, 1), 10))
	body := anthropicError{Type: "error"}
	body.Error.Type = "rate_limit_error"
	body.Error.Message = "This request would exceed the rate limit for your organization of " + strconv.FormatInt(perMinute(v), 10) + " requests per minute."
	writeJSON(w, http.StatusTooManyRequests, body)
}

func writeAnthropic(h http.Header, v personaView) {
	setDate(h, v.now)
	h.Set("Anthropic-Ratelimit-Requests-Limit", strconv.FormatInt(perMinute(v), 10))
	h.Set("Anthropic-Ratelimit-Requests-Remaining", strconv.FormatInt(v.head.Remaining, 10))
	h.Set("Anthropic-Ratelimit-Requests-Reset", time.Unix(unixCeil(v.now, v.head.Reset), 0).UTC().Format(time.RFC3339))
}
