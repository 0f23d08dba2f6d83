package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/dialects"
	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/testserver"
)

// A quota belongs to a credential, not to a host: by default the stack keys each request by its
// host and a short hash of its Authorization header, so two API keys calling one host are paced
// and paused apart, and no key, log line or metric carries the secret. An API that takes its key
// in a header of its own names it with WithCredentialKey.
func ExampleWithCredentialKey() {
	t := client.NewTransport(nil, client.WithCredentialKey(dialects.Keyer{Header: "X-Api-Key"}))
	key := func(apiKey string) string {
		req, _ := http.NewRequest(http.MethodGet, "https://api.example.com/v1/items", nil)
		req.Header.Set("X-Api-Key", apiKey)
		return t.KeyOf(req)
	}
	alice, bob := key("sk-alice-0123456789"), key("sk-bob-9876543210")
	fmt.Println("two keys:", alice != bob)
	fmt.Println("same host:", strings.HasPrefix(alice, "api.example.com#"), strings.HasPrefix(bob, "api.example.com#"))
	fmt.Println("secret in the key:", strings.Contains(alice, "alice"))

	req, _ := http.NewRequest(http.MethodGet, "https://api.example.com/v1/items", nil)
	req = req.WithContext(request.WithKey(req.Context(), "tenant-42"))
	fmt.Println("a context key wins:", t.KeyOf(req))
	// Output:
	// two keys: true
	// same host: true true
	// secret in the key: false
	// a context key wins: tenant-42
}

// A request that weighs more than one call (an LLM prompt's tokens) carries its cost in its
// context. Against an OpenAI-style server that limits requests and tokens per minute, the default
// learner reads both quotas from the x-ratelimit-*-tokens headers and paces by whichever runs out
// first: here the token quota (120,000 a minute, 1,000 at once), for prompts of 400 to 900 tokens;
// the second waits for its tokens instead of being refused.
// (The example server reads each request's tokens from a header; a real API counts them itself.)
func ExampleWithLearner_cost() {
	srv, err := testserver.New(testserver.WithDialect("openai"), testserver.WithRules(
		testserver.Rule{Name: "rpm", Limit: 600, Window: time.Minute},
		testserver.Rule{Name: "tpm", Limit: 120000, Burst: 1000, Window: time.Minute, Cost: "X-Tokens", Unit: testserver.UnitTokens},
	))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c := client.New()
	for _, tokens := range []int{400, 900, 500} {
		ctx := request.WithCost(context.Background(), tokens)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v1/chat/completions", nil)
		req.Header.Set("X-Tokens", strconv.Itoa(tokens))
		resp, err := c.Do(req)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(tokens, "tokens:", resp.Status)
	}
	fmt.Println("refused for tokens:", srv.Stats().Rules["tpm"].Denied)
	// Output:
	// 400 tokens: 200 OK
	// 900 tokens: 200 OK
	// 500 tokens: 200 OK
	// refused for tokens: 0
}
