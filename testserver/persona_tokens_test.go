package testserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rule counting tokens weighs each request by its Cost header, and the LLM personas write it as
// their token family: OpenAI's x-ratelimit-*-tokens, Anthropic's anthropic-ratelimit-tokens-*.
// A request whose tokens do not fit is refused with the persona's token message, and counts
// nothing.
func TestLLMPersonaTokens(t *testing.T) {
	rules := []Rule{
		{Name: "rpm", Limit: 60, Window: time.Minute},
		{Name: "tpm", Limit: 1000, Window: time.Minute, Cost: "X-Tokens", Unit: UnitTokens},
	}
	send := func(l *Limiter, tokens string) *http.Response {
		rec := httptest.NewRecorder()
		l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})).
			ServeHTTP(rec, req(http.MethodPost, "/v1/chat/completions", "192.0.2.1:1234", "X-Tokens", tokens))
		return rec.Result()
	}
	t.Run("openai", func(t *testing.T) {
		l := mustLimiter(rules, WithClock(newFakeClock().Now), WithDialect("openai"))
		defer l.Close()
		h := send(l, "600").Header
		assert.Equal(t, "60", h.Get("X-Ratelimit-Limit-Requests"))
		assert.Equal(t, "59", h.Get("X-Ratelimit-Remaining-Requests"))
		assert.Equal(t, "1000", h.Get("X-Ratelimit-Limit-Tokens"))
		assert.Equal(t, "400", h.Get("X-Ratelimit-Remaining-Tokens"))
		assert.Equal(t, "36s", h.Get("X-Ratelimit-Reset-Tokens"), "600 tokens back at 1000 a minute")
		resp := send(l, "500")
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		body, _ := io.ReadAll(resp.Body)
		assert.Contains(t, string(body), "tokens per min (TPM)")
		assert.Equal(t, "400", resp.Header.Get("X-Ratelimit-Remaining-Tokens"), "a refusal counts nothing")
		assert.Equal(t, http.StatusOK, send(l, "garbage").StatusCode, "an unreadable cost weighs 1")
		assert.Equal(t, "398", send(l, "").Header.Get("X-Ratelimit-Remaining-Tokens"), "no cost weighs 1")
	})
	t.Run("anthropic", func(t *testing.T) {
		l := mustLimiter(rules, WithClock(newFakeClock().Now), WithDialect("anthropic"))
		defer l.Close()
		h := send(l, "250").Header
		assert.Equal(t, "59", h.Get("Anthropic-Ratelimit-Requests-Remaining"))
		assert.Equal(t, "1000", h.Get("Anthropic-Ratelimit-Tokens-Limit"))
		assert.Equal(t, "750", h.Get("Anthropic-Ratelimit-Tokens-Remaining"))
		resp := send(l, "751")
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		body, _ := io.ReadAll(resp.Body)
		assert.Contains(t, string(body), "tokens per minute")
	})
}

func TestRuleCostAndUnitValidation(t *testing.T) {
	_, err := NewLimiter([]Rule{{Limit: 1, Window: time.Second, Unit: "bytes"}})
	var re *RuleError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "unit", re.Field)
	_, err = NewLimiter([]Rule{{Limit: 1, Window: time.Second, Cost: "X Tokens"}})
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "cost", re.Field)

	var r Rule
	require.NoError(t, json.NewDecoder(strings.NewReader(`{"limit": 1000, "window": "1m", "cost": "X-Tokens", "unit": "tokens"}`)).Decode(&r))
	assert.Equal(t, "X-Tokens", r.Cost)
	assert.Equal(t, UnitTokens, r.Unit)
}
