package client

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
)

// costs are the token costs of the weighted batch's requests, in turn: a chat API's mix of short
// and long prompts, each below the token quota's burst so that every one can be admitted.
var costs = [...]int{100, 2500, 400, 1200, 60, 3000, 800}

// runWeighted sends n POSTs through c with workers goroutines, request i costing costs[i%len]
// tokens: the server reads the cost from X-Tokens, the client from request.WithCost when weigh.
func runWeighted(t *testing.T, c *http.Client, n, workers int, weigh bool) map[int]int {
	t.Helper()
	return runRequests(t, c, n, workers, func(i int) (*http.Request, error) {
		cost := costs[i%len(costs)]
		ctx := t.Context()
		if weigh {
			ctx = request.WithCost(ctx, cost)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.test/v1/chat", nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer sk-test")
		req.Header.Set("X-Tokens", strconv.Itoa(cost))
		return req, nil
	})
}

// TestWeightedRequests: against the OpenAI and Anthropic personas with a request quota and a token
// quota (a continuously refilled bucket each, as both vendors document), requests of different
// costs carried by request.WithCost are paced by whichever quota runs out first. The token quota
// binds here (60 requests and 8,000 tokens a minute; the mix averages 1,151 tokens, so about 7
// requests a minute): with honest headers no request is refused for tokens, nothing is lost, and
// the batch takes no more than 1.10 times what the token quota physically allows (its burst at
// once, the rest at its rate). Without the cost the same batch draws token throttles, which shows
// the cost is what keeps the quota.
func TestWeightedRequests(t *testing.T) {
	const n, workers = 70, 8
	const tpm = 8000
	total := 0
	for i := range n {
		total += costs[i%len(costs)]
	}
	// The physical limit: the bucket's tpm at once, the rest at tpm a minute.
	physical := time.Duration(float64(total-tpm) / tpm * float64(time.Minute))
	for _, persona := range []string{"openai", "anthropic"} {
		for _, weigh := range []bool{true, false} {
			name := persona + "/cost"
			if !weigh {
				name = persona + "/no-cost"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rules := []testserver.Rule{
						{Name: "rpm", Limit: 60, Window: time.Minute},
						{Name: "tpm", Limit: tpm, Window: time.Minute, Cost: "X-Tokens", Unit: testserver.UnitTokens},
					}
					base, lim := limitedHandler(t, rules, testserver.WithDialect(persona))
					c := &http.Client{Transport: NewTransport(base,
						WithRetry(retry.WithMaxAttempts(100), retry.WithMaxElapsed(0), retry.WithBudget(nil), retry.WithMaxRetryAfter(time.Hour)),
						WithMaxWait(0))}
					start := time.Now()
					statuses := runWeighted(t, c, n, workers, weigh)
					elapsed := time.Since(start)
					assert.Equal(t, map[int]int{http.StatusOK: n}, statuses, "lost requests")
					st := lim.Stats()
					tokens, reqs := st.Rules["tpm"], st.Rules["rpm"]
					t.Logf("%s: %v (physical %v, %.3fx), token throttles %d, request throttles %d, attempts %d",
						name, elapsed, physical, float64(elapsed)/float64(physical), tokens.Denied, reqs.Denied, reqs.Allowed+reqs.Denied)
					if weigh {
						assert.Zero(t, tokens.Denied, "refused for tokens with honest headers")
						assert.LessOrEqual(t, float64(elapsed), 1.10*float64(physical), "slower than 1.10x the token quota allows")
					} else {
						assert.NotZero(t, tokens.Denied, "without the cost the token quota is overrun")
					}
				})
			})
		}
	}
}
