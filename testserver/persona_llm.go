package testserver

import (
	"net/http"
	"strconv"
	"time"
)

// openAIPersona answers as OpenAI's API (platform.openai.com, "Rate limits"): the request quota in
// x-ratelimit-{limit,remaining,reset}-requests, the reset as a Go-style duration ("1s", "6m0s",
// "20ms") of the time until the quota is fully replenished, the token quota the same way in
// x-ratelimit-{limit,remaining,reset}-tokens when a rule counts tokens (Rule.Unit), and a 429 with
// retry-after. OpenAI's limits are refilled continuously: token-bucket by default.
type openAIPersona struct{}

func (openAIPersona) algorithm() string { return "token-bucket" }

func (openAIPersona) admitted(h http.Header, v personaView) { writeOpenAI(h, v) }

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
	if v.tokensOK && !v.tokens.Allowed && !v.tokens.Shadowed {
		body.Error.Message = "Rate limit reached for tokens per min (TPM): Limit " + strconv.FormatInt(perMinuteOf(v.tokens), 10) +
			", Remaining " + strconv.FormatInt(v.tokens.Remaining, 10) + ". Please try again in " + openAIDuration(v.retry) + "."
		body.Error.Type = "tokens"
	} else {
		body.Error.Message = "Rate limit reached for requests per min (RPM): Limit " + strconv.FormatInt(perMinute(v), 10) +
			". Please try again in " + openAIDuration(v.retry) + "."
		body.Error.Type = "requests"
	}
	body.Error.Code = "rate_limit_exceeded"
	writeJSON(w, http.StatusTooManyRequests, body)
}

func writeOpenAI(h http.Header, v personaView) {
	if v.headOK {
		h.Set("X-Ratelimit-Limit-Requests", strconv.FormatInt(perMinute(v), 10))
		h.Set("X-Ratelimit-Remaining-Requests", strconv.FormatInt(v.head.Remaining, 10))
		h.Set("X-Ratelimit-Reset-Requests", openAIDuration(v.head.Reset))
	}
	if v.tokensOK {
		h.Set("X-Ratelimit-Limit-Tokens", strconv.FormatInt(perMinuteOf(v.tokens), 10))
		h.Set("X-Ratelimit-Remaining-Tokens", strconv.FormatInt(v.tokens.Remaining, 10))
		h.Set("X-Ratelimit-Reset-Tokens", openAIDuration(v.tokens.Reset))
	}
}

// perMinute is the advertised rule's quota stated per minute (perMinuteOf).
func perMinute(v personaView) int64 { return perMinuteOf(v.head) }

// perMinuteOf is a rule's quota stated per minute, as OpenAI and Anthropic state theirs (requests
// per minute, RPM; tokens per minute, TPM): a rule of 20 per second is 1,200 per minute. A rule
// whose window is not a divisor or multiple of a minute is rounded down; never below 1.
func perMinuteOf(rr RuleResult) int64 {
	if rr.Window <= 0 {
		return rr.Limit
	}
	return max(1, int64(float64(rr.Limit)*float64(time.Minute)/float64(rr.Window)))
}

// openAIDuration formats d as OpenAI does: Go's Duration.String of d rounded up to the millisecond
// ("1s", "6m0s", "20ms", "1.5s").
func openAIDuration(d time.Duration) string {
	d = (max(d, 0) + time.Millisecond - 1).Truncate(time.Millisecond)
	return d.String()
}

// anthropicPersona answers as Anthropic's API (docs.anthropic.com, "Rate limits"): the request
// quota in anthropic-ratelimit-requests-{limit,remaining,reset}, the reset an RFC 3339 instant at
// which the quota is fully replenished, the token quota the same way in
// anthropic-ratelimit-tokens-{limit,remaining,reset} when a rule counts tokens (Rule.Unit; the
// "most restrictive" token limit Anthropic sends beside its input and output ones), and a 429 with
// retry-after and Anthropic's error body.
// Anthropic documents a token bucket: token-bucket by default.
type anthropicPersona struct{}

func (anthropicPersona) algorithm() string { return "token-bucket" }

func (anthropicPersona) admitted(h http.Header, v personaView) { writeAnthropic(h, v) }

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
	if v.tokensOK && !v.tokens.Allowed && !v.tokens.Shadowed {
		body.Error.Message = "This request would exceed the rate limit for your organization of " + strconv.FormatInt(perMinuteOf(v.tokens), 10) + " tokens per minute."
	} else {
		body.Error.Message = "This request would exceed the rate limit for your organization of " + strconv.FormatInt(perMinute(v), 10) + " requests per minute."
	}
	writeJSON(w, http.StatusTooManyRequests, body)
}

func writeAnthropic(h http.Header, v personaView) {
	setDate(h, v.now)
	if v.headOK {
		h.Set("Anthropic-Ratelimit-Requests-Limit", strconv.FormatInt(perMinute(v), 10))
		h.Set("Anthropic-Ratelimit-Requests-Remaining", strconv.FormatInt(v.head.Remaining, 10))
		h.Set("Anthropic-Ratelimit-Requests-Reset", time.Unix(unixCeil(v.now, v.head.Reset), 0).UTC().Format(time.RFC3339))
	}
	if v.tokensOK {
		h.Set("Anthropic-Ratelimit-Tokens-Limit", strconv.FormatInt(perMinuteOf(v.tokens), 10))
		h.Set("Anthropic-Ratelimit-Tokens-Remaining", strconv.FormatInt(v.tokens.Remaining, 10))
		h.Set("Anthropic-Ratelimit-Tokens-Reset", time.Unix(unixCeil(v.now, v.tokens.Reset), 0).UTC().Format(time.RFC3339))
	}
}
