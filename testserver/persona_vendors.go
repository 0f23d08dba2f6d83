package testserver

import (
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// shopifyPersona answers as Shopify's REST Admin API (shopify.dev, "REST Admin API rate limits"):
// X-Shopify-Shop-Api-Call-Limit: used/capacity on every response, and a 429 with a decimal
// Retry-After ("2.0"). Shopify's limiter is a leaky bucket (40 requests leaking 2/s on the
// standard plan, Limit 40 per Window 20s here): leaky-bucket by default. used is the bucket's
// capacity (the rule's burst) minus what remains.
type shopifyPersona struct{}

func (shopifyPersona) algorithm() string { return "leaky-bucket" }

func (shopifyPersona) admitted(h http.Header, v personaView) {
	if v.headOK {
		writeShopify(h, v)
	}
}

func (shopifyPersona) denied(w http.ResponseWriter, v personaView) {
	h := w.Header()
	writeShopify(h, v)
	// Tenths of a second, rounded up: a client that waits that long is admitted.
	tenths := int64((v.retry + 100*time.Millisecond - 1) / (100 * time.Millisecond))
	h.Set("Retry-After", strconv.FormatInt(tenths/10, 10)+"."+strconv.FormatInt(tenths%10, 10))
	rate := float64(v.head.Limit) / v.head.Window.Seconds()
	writeJSON(w, http.StatusTooManyRequests, map[string]string{
		"errors": "Exceeded " + strconv.FormatFloat(rate, 'g', 4, 64) + " calls per second for api client. Reduce request rates to resume uninterrupted service.",
	})
}

func writeShopify(h http.Header, v personaView) {
	capacity := max(v.burst, 1)
	used := min(max(capacity-v.head.Remaining, 0), capacity)
	h.Set("X-Shopify-Shop-Api-Call-Limit", strconv.FormatInt(used, 10)+"/"+strconv.FormatInt(capacity, 10))
}

// discordPersona answers as Discord's API (discord.com/developers, "Rate Limits"):
// X-RateLimit-Limit / -Remaining / -Reset (Unix seconds with milliseconds) / -Reset-After
// (seconds with milliseconds) / -Bucket on every response, and a 429 with Retry-After,
// X-RateLimit-Scope: user and Discord's JSON body. Discord's buckets reset at once: fixed-window
// by default. The bucket is named after the rule.
type discordPersona struct{}

func (discordPersona) algorithm() string { return "fixed-window" }

func (discordPersona) admitted(h http.Header, v personaView) {
	if v.headOK {
		writeDiscord(h, v, v.head.Reset)
	}
}

// discordError is Discord's 429 body.
type discordError struct {
	Message    string  `json:"message"`
	RetryAfter float64 `json:"retry_after"`
	Global     bool    `json:"global"`
}

func (discordPersona) denied(w http.ResponseWriter, v personaView) {
	h := w.Header()
	wait := max(v.retry, v.head.Reset)
	writeDiscord(h, v, wait)
	h.Set("Retry-After", strconv.FormatInt(ceilSeconds(v.retry, 1), 10))
	h.Set("X-RateLimit-Scope", "user")
	writeJSON(w, http.StatusTooManyRequests, discordError{
		Message:    "You are being rate limited.",
		RetryAfter: math.Ceil(v.retry.Seconds()*1000) / 1000,
	})
}

// writeDiscord writes the headers with reset-after the given wait, in seconds with milliseconds
// rounded up.
func writeDiscord(h http.Header, v personaView, resetAfter time.Duration) {
	ms := int64((resetAfter + time.Millisecond - 1) / time.Millisecond)
	at := v.now.Add(time.Duration(ms) * time.Millisecond)
	atMS := at.UnixMilli()
	if at.Nanosecond()%int(time.Millisecond) > 0 {
		atMS++
	}
	setDate(h, v.now)
	h.Set("X-RateLimit-Limit", strconv.FormatInt(v.head.Limit, 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(v.head.Remaining, 10))
	h.Set("X-RateLimit-Reset", millisDecimal(atMS))
	h.Set("X-RateLimit-Reset-After", millisDecimal(ms))
	h.Set("X-RateLimit-Bucket", v.head.Rule)
}

// millisDecimal writes a count of milliseconds as seconds with three decimals ("64.570").
func millisDecimal(ms int64) string {
	frac := strconv.FormatInt(1000+ms%1000, 10)[1:]
	return strconv.FormatInt(ms/1000, 10) + "." + frac
}

// stripePersona answers as Stripe's API (docs.stripe.com, "Rate limits"): a Request-Id on every
// response and, when limited, a 429 with Stripe's rate_limit error and no rate-limit header.
// Stripe does not document its limiter kind: the default algorithm stays.
type stripePersona struct{}

var stripeRequestID atomic.Int64

func (stripePersona) algorithm() string { return "" }

func (stripePersona) admitted(h http.Header, _ personaView) {
	h.Set("Request-Id", "req_steady"+strconv.FormatInt(stripeRequestID.Add(1), 10))
}

// stripeError is Stripe's error body.
type stripeError struct {
	Error struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s stripePersona) denied(w http.ResponseWriter, v personaView) {
	s.admitted(w.Header(), v)
	var body stripeError
	body.Error.Type, body.Error.Code = "invalid_request_error", "rate_limit"
	body.Error.Message = "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits."
	writeJSON(w, http.StatusTooManyRequests, body)
}
