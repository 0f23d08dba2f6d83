package dialects

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// vendorCase is one literal response from a vendor's documentation and its reading.
type vendorCase struct {
	name   string
	status int
	hdrs   []string
	want   Reading
}

func runVendor(t *testing.T, now time.Time, tests []vendorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Read(response(tt.status, "", tt.hdrs...), now))
		})
	}
}

// OpenAI's "Rate limits in headers" table (sample values 60, 150000, 59, 149984, 1s, 6m0s) and
// headers quoted from a real response on community.openai.com (5000, 160000, 4999, 159976, 12ms,
// 9ms, and the tokens_usage_based family).
func TestOpenAIFixtures(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	q := func(name string, unit Unit, limit, remaining int64, reset time.Duration) Quota {
		return Quota{Name: name, Unit: unit, Limit: limit, Window: time.Minute, Remaining: remaining, HasRemaining: true,
			Reset: reset, HasReset: true, Continuous: true}
	}
	runVendor(t, now, []vendorCase{
		{
			name: "docs table", status: 200,
			hdrs: []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-requests", "59",
				"x-ratelimit-remaining-tokens", "149984", "x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"},
			want: Reading{Dialect: "openai", Quotas: []Quota{q("requests", UnitRequests, 60, 59, time.Second), q("tokens", UnitTokens, 150000, 149984, 6*time.Minute)}},
		},
		{
			name: "community response", status: 200,
			hdrs: []string{"x-ratelimit-limit-requests", "5000", "x-ratelimit-limit-tokens", "160000", "x-ratelimit-limit-tokens_usage_based", "160000",
				"x-ratelimit-remaining-requests", "4999", "x-ratelimit-remaining-tokens", "159976", "x-ratelimit-remaining-tokens_usage_based", "159976",
				"x-ratelimit-reset-requests", "12ms", "x-ratelimit-reset-tokens", "9ms", "x-ratelimit-reset-tokens_usage_based", "9ms"},
			want: Reading{Dialect: "openai", Quotas: []Quota{q("requests", UnitRequests, 5000, 4999, 12*time.Millisecond),
				q("tokens", UnitTokens, 160000, 159976, 9*time.Millisecond), q("tokens_usage_based", UnitTokens, 160000, 159976, 9*time.Millisecond)}},
		},
		{
			name: "429 for tokens: requests first, tokens exhausted", status: 429,
			hdrs: []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "58", "x-ratelimit-reset-requests", "1m30.5s",
				"x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "20ms", "retry-after", "1"},
			want: Reading{Dialect: "openai", Throttled: true, RetryAfter: time.Second, HasRetryAfter: true,
				Quotas: []Quota{q("requests", UnitRequests, 60, 58, 90*time.Second+500*time.Millisecond), q("tokens", UnitTokens, 150000, 0, 20*time.Millisecond)}},
		},
		{
			name: "Azure OpenAI's -1 values are ignored", status: 200,
			hdrs: []string{"x-ratelimit-limit-tokens", "-1", "x-ratelimit-remaining-tokens", "-1", "x-ratelimit-reset-tokens", "0"},
			want: Reading{Dialect: "openai", Quotas: []Quota{{Name: "tokens", Unit: UnitTokens, Window: time.Minute, Continuous: true, HasReset: true}}},
		},
	})
	r := Read(response(429, "", "x-ratelimit-remaining-requests", "58", "x-ratelimit-remaining-tokens", "0"), now)
	ex, ok := r.Exhausted()
	assert.True(t, ok)
	assert.Equal(t, UnitTokens, ex.Unit, "Exhausted finds the tokens quota behind the requests one")
}

// Anthropic: a recorded api.anthropic.com response (tidyllm's fixture, Date Thu, 21 Aug 2025
// 12:41:00 GMT, resets 12:40:59Z and 12:41:00Z: already replenished) and the documented header set
// with a later reset and retry-after on a 429.
func TestAnthropicFixtures(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	q := func(name string, unit Unit, limit, remaining int64, reset time.Duration) Quota {
		return Quota{Name: name, Unit: unit, Limit: limit, Window: time.Minute, Remaining: remaining, HasRemaining: true,
			Reset: reset, HasReset: true, Continuous: true}
	}
	runVendor(t, now, []vendorCase{
		{
			name: "recorded response", status: 200,
			hdrs: []string{"date", "Thu, 21 Aug 2025 12:41:00 GMT",
				"anthropic-ratelimit-input-tokens-limit", "80000", "anthropic-ratelimit-input-tokens-remaining", "80000", "anthropic-ratelimit-input-tokens-reset", "2025-08-21T12:40:59Z",
				"anthropic-ratelimit-output-tokens-limit", "16000", "anthropic-ratelimit-output-tokens-remaining", "16000", "anthropic-ratelimit-output-tokens-reset", "2025-08-21T12:41:00Z",
				"anthropic-ratelimit-requests-limit", "1000", "anthropic-ratelimit-requests-remaining", "999", "anthropic-ratelimit-requests-reset", "2025-08-21T12:40:59Z",
				"anthropic-ratelimit-tokens-limit", "96000", "anthropic-ratelimit-tokens-remaining", "96000", "anthropic-ratelimit-tokens-reset", "2025-08-21T12:40:59Z"},
			want: Reading{Dialect: "anthropic", Quotas: []Quota{q("requests", UnitRequests, 1000, 999, 0), q("tokens", UnitTokens, 96000, 96000, 0),
				q("input-tokens", UnitInputTokens, 80000, 80000, 0), q("output-tokens", UnitOutputTokens, 16000, 16000, 0)}},
		},
		{
			name: "429 with retry-after", status: 429,
			hdrs: []string{"date", "Sat, 25 Oct 2025 11:59:30 GMT", "retry-after", "60",
				"anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", "2025-10-25T12:00:00Z",
				"anthropic-ratelimit-tokens-limit", "50000", "anthropic-ratelimit-tokens-remaining", "49500", "anthropic-ratelimit-tokens-reset", "2025-10-25T12:01:00Z"},
			want: Reading{Dialect: "anthropic", Throttled: true, RetryAfter: time.Minute, HasRetryAfter: true,
				Quotas: []Quota{q("requests", UnitRequests, 50, 0, 30*time.Second), q("tokens", UnitTokens, 50000, 49500, 90*time.Second)}},
		},
	})
}

// Shopify's REST Admin API: "X-Shopify-Shop-Api-Call-Limit: 32/40", and on a 429 "40/40" with
// "Retry-After: 2.0"; "1/40" from Shopify's partner gist.
func TestShopifyFixtures(t *testing.T) {
	q := func(used, capacity int64, reset time.Duration) Quota {
		return Quota{Name: "rest", Limit: capacity, Window: 20 * time.Second, WindowAssumed: true, Remaining: capacity - used,
			HasRemaining: true, Reset: reset, HasReset: true, Continuous: true}
	}
	runVendor(t, time.Unix(1_800_000_000, 0), []vendorCase{
		// 32 calls in a bucket leaking 2/s drain in 16 s.
		{name: "32/40", status: 200, hdrs: []string{"X-Shopify-Shop-Api-Call-Limit", "32/40"},
			want: Reading{Dialect: "shopify", Quotas: []Quota{q(32, 40, 16*time.Second)}}},
		{name: "1/40", status: 200, hdrs: []string{"X-Shopify-Shop-Api-Call-Limit", "1/40"},
			want: Reading{Dialect: "shopify", Quotas: []Quota{q(1, 40, 500*time.Millisecond)}}},
		{name: "429 40/40 Retry-After 2.0", status: 429, hdrs: []string{"X-Shopify-Shop-Api-Call-Limit", "40/40", "Retry-After", "2.0"},
			want: Reading{Dialect: "shopify", Throttled: true, RetryAfter: 2 * time.Second, HasRetryAfter: true, Quotas: []Quota{q(40, 40, 20*time.Second)}}},
		{name: "Plus bucket 400 leaking 20/s", status: 200, hdrs: []string{"X-Shopify-Shop-Api-Call-Limit", "100/400"},
			want: Reading{Dialect: "shopify", Quotas: []Quota{q(100, 400, 5*time.Second)}}},
		{name: "malformed", status: 200, hdrs: []string{"X-Shopify-Shop-Api-Call-Limit", "40"},
			want: Reading{Dialect: "shopify"}},
		{name: "fill above capacity", status: 200, hdrs: []string{"X-Shopify-Shop-Api-Call-Limit", "40/1"},
			want: Reading{Dialect: "shopify"}},
	})
}

// Discord's "Rate Limits" page: the header-format example and the three example 429 responses
// (user, shared resource, global), quoted verbatim.
func TestDiscordFixtures(t *testing.T) {
	runVendor(t, time.Unix(1_470_172_980, 0), []vendorCase{
		{
			name: "header format example", status: 200,
			hdrs: []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1470173023", "X-RateLimit-Reset-After", "1", "X-RateLimit-Bucket", "abcd1234"},
			want: Reading{Dialect: "discord", Bucket: "abcd1234", Quotas: []Quota{{Limit: 5, Remaining: 0, HasRemaining: true, Reset: time.Second, HasReset: true, ResetAt: time.Unix(1470173023, 0).UTC()}}},
		},
		{
			name: "exceeded user rate limit", status: 429,
			hdrs: []string{"Content-Type", "application/json", "Retry-After", "65", "X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0",
				"X-RateLimit-Reset", "1470173023.123", "X-RateLimit-Reset-After", "64.57", "X-RateLimit-Bucket", "abcd1234", "X-RateLimit-Scope", "user"},
			want: Reading{Dialect: "discord", Throttled: true, RetryAfter: 65 * time.Second, HasRetryAfter: true, Bucket: "abcd1234",
				Quotas: []Quota{{Limit: 10, Remaining: 0, HasRemaining: true, Reset: 64570 * time.Millisecond, HasReset: true, ResetAt: time.Unix(1470173023, 123000000).UTC()}}},
		},
		{
			name: "exceeded shared resource rate limit", status: 429,
			hdrs: []string{"Content-Type", "application/json", "Retry-After", "1337", "X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "9",
				"X-RateLimit-Reset", "1470173023.123", "X-RateLimit-Reset-After", "64.57", "X-RateLimit-Bucket", "abcd1234", "X-RateLimit-Scope", "shared"},
			want: Reading{Dialect: "discord", Throttled: true, RetryAfter: 1337 * time.Second, HasRetryAfter: true, Bucket: "abcd1234",
				Quotas: []Quota{{Limit: 10, Remaining: 9, HasRemaining: true, Reset: 64570 * time.Millisecond, HasReset: true, ResetAt: time.Unix(1470173023, 123000000).UTC()}}},
		},
		{
			name: "exceeded global rate limit", status: 429,
			hdrs: []string{"Content-Type", "application/json", "Retry-After", "65", "X-RateLimit-Global", "true", "X-RateLimit-Scope", "global"},
			want: Reading{Dialect: "discord", Throttled: true, RetryAfter: 65 * time.Second, HasRetryAfter: true, Scope: ScopeGlobal},
		},
		{
			name: "reset-after longer than Retry-After: the longer wins", status: 429,
			hdrs: []string{"Retry-After", "1", "X-RateLimit-Reset-After", "1.5", "X-RateLimit-Bucket", "b"},
			want: Reading{Dialect: "discord", Throttled: true, RetryAfter: 1500 * time.Millisecond, HasRetryAfter: true, Bucket: "b",
				Quotas: []Quota{{Reset: 1500 * time.Millisecond, HasReset: true}}},
		},
	})
}

// Azure: Resource Manager's remaining-request headers and the SDK's millisecond retry headers.
func TestAzureFixtures(t *testing.T) {
	runVendor(t, time.Unix(1_800_000_000, 0), []vendorCase{
		{
			name: "Resource Manager remaining reads and writes", status: 200,
			hdrs: []string{"x-ms-ratelimit-remaining-subscription-writes", "1199", "x-ms-ratelimit-remaining-subscription-reads", "11999"},
			want: Reading{Dialect: "azure", Quotas: []Quota{{Name: "subscription-reads", Remaining: 11999, HasRemaining: true},
				{Name: "subscription-writes", Remaining: 1199, HasRemaining: true}}},
		},
		{
			name: "x-ms-retry-after-ms wins over Retry-After", status: 429,
			hdrs: []string{"x-ms-retry-after-ms", "1500", "Retry-After", "2"},
			want: Reading{Dialect: "azure", Throttled: true, RetryAfter: 1500 * time.Millisecond, HasRetryAfter: true},
		},
		{
			name: "retry-after-ms with a fraction rounds up", status: 429,
			hdrs: []string{"retry-after-ms", "43.2"},
			want: Reading{Dialect: "azure", Throttled: true, RetryAfter: 44 * time.Millisecond, HasRetryAfter: true},
		},
	})
}

// Stripe: Stripe-Should-Retry (as Stripe's libraries read it) and a bare 429 with Stripe's
// Request-Id.
func TestStripeFixtures(t *testing.T) {
	runVendor(t, time.Unix(1_800_000_000, 0), []vendorCase{
		{name: "should retry false", status: 400, hdrs: []string{"Request-Id", "req_123", "Stripe-Should-Retry", "false"},
			want: Reading{Dialect: "stripe", Retry: RetryForbidden}},
		{name: "should retry true on a 409", status: 409, hdrs: []string{"Stripe-Should-Retry", "true"},
			want: Reading{Dialect: "stripe", Retry: RetryAllowed}},
		{name: "rate limited 429", status: 429, hdrs: []string{"Request-Id", "req_abc"},
			want: Reading{Dialect: "stripe", Throttled: true}},
	})
}

// Salesforce's "Limit Info Header" examples.
func TestSalesforceFixtures(t *testing.T) {
	day := 24 * time.Hour
	runVendor(t, time.Unix(1_800_000_000, 0), []vendorCase{
		{name: "api-usage=18/5000", status: 200, hdrs: []string{"Sforce-Limit-Info", "api-usage=18/5000"},
			want: Reading{Dialect: "salesforce", Quotas: []Quota{{Name: "api-usage", Limit: 5000, Window: day, WindowAssumed: true, Remaining: 4982, HasRemaining: true}}}},
		{name: "with api-bursts", status: 200, hdrs: []string{"Sforce-Limit-Info", "api-usage=10018/100000; api-bursts=1/750"},
			want: Reading{Dialect: "salesforce", Quotas: []Quota{{Name: "api-usage", Limit: 100000, Window: day, WindowAssumed: true, Remaining: 89982, HasRemaining: true},
				{Name: "api-bursts", Limit: 750, Remaining: 749, HasRemaining: true}}}},
		{name: "per-app usage", status: 200, hdrs: []string{"Sforce-Limit-Info", "api-usage=25/5000; per-app-api-usage=17/250(appName=sample-connected-app)"},
			want: Reading{Dialect: "salesforce", Quotas: []Quota{{Name: "api-usage", Limit: 5000, Window: day, WindowAssumed: true, Remaining: 4975, HasRemaining: true},
				{Name: "per-app-api-usage", Limit: 250, Remaining: 233, HasRemaining: true}}}},
		{name: "403 with the daily limit used up", status: 403, hdrs: []string{"Sforce-Limit-Info", "api-usage=5000/5000"},
			want: Reading{Dialect: "salesforce", Throttled: true, Quotas: []Quota{{Name: "api-usage", Limit: 5000, Window: day, WindowAssumed: true, Remaining: 0, HasRemaining: true}}}},
	})
}
