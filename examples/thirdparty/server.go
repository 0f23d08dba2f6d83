package main

import (
	"time"

	"github.com/steadyhttp/steady/testserver"
)

// The API's limit: per token, a token bucket of apiLimit requests per second with a burst of
// apiBurst — tight, so that listing all the repositories at once is throttled.
const (
	apiLimit = 20
	apiBurst = 5
)

// startAPI starts the fake API behind a testserver enforcing the limit per API token (the
// Authorization header). Throttled calls get 429 with Retry-After, X-RateLimit-Limit, -Remaining
// and -Reset, and the IETF RateLimit fields. The caller closes it.
func startAPI() (*testserver.Server, error) {
	return testserver.New(
		testserver.WithRules(testserver.Rule{
			Name:      "core",
			Key:       testserver.KeyHeader("Authorization"),
			Algorithm: "token-bucket",
			Limit:     apiLimit,
			Window:    time.Second,
			Burst:     apiBurst,
		}),
		testserver.WithHandler(apiHandler()),
	)
}
