package client

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
)

// TestPersonasLoseNothing: against each testserver persona (the status codes and headers of a real
// API, and its limiter kind where the vendor documents one), a batch through the default stack and
// through WithLearner finishes every request: a GitHub-style 403 with nothing remaining is a
// throttle, waited out until its reset, never a final failure. Each persona gets a quota in its
// vendor's terms, small enough that the batch meets it many times. The server's clock is moved
// into the Unix era (synctest's starts in 2000, before the epoch resets of 1e9 seconds that
// GitHub and X send are told from delta seconds). Throttled answers are counted at the server and
// logged; the sweep holds the goals.
func TestPersonasLoseNothing(t *testing.T) {
	const n, workers = 200, 4
	rules := map[string]testserver.Rule{
		"github":    {Limit: 60, Window: time.Hour},        // GitHub's unauthenticated 60 an hour
		"openai":    {Limit: 60, Window: time.Minute},      // 60 RPM
		"anthropic": {Limit: 50, Window: time.Minute},      // 50 RPM, Anthropic's first tier
		"shopify":   {Limit: 40, Window: 20 * time.Second}, // a bucket of 40 leaking 2/s
		"discord":   {Limit: 5, Window: 5 * time.Second},   // a route's 5 per 5 s
	}
	paces := []struct {
		name string
		opts []Option
	}{
		{"default", nil},
		{"learner", []Option{WithLearner()}},
	}
	for _, persona := range []string{"ietf", "x-ratelimit", "github", "openai", "anthropic", "shopify", "discord", "stripe", "none"} {
		for _, pace := range paces {
			t.Run(persona+"/"+pace.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rule, ok := rules[persona]
					if !ok {
						rule = testserver.Rule{Limit: 20, Window: time.Second}
					}
					era := 30 * 365 * 24 * time.Hour
					base, lim := limitedHandler(t, []testserver.Rule{rule}, testserver.WithDialect(persona),
						testserver.WithClock(func() time.Time { return time.Now().Add(era) }))
					opts := append([]Option{WithRetry(retry.WithMaxAttempts(100), retry.WithMaxElapsed(0), retry.WithBudget(nil), retry.WithMaxRetryAfter(time.Hour)), WithMaxWait(0)}, pace.opts...)
					c := &http.Client{Transport: NewTransport(base, opts...)}
					start := time.Now()
					statuses := runBatch(t, c, "http://api.test/", n, workers)
					assert.Equal(t, map[int]int{http.StatusOK: n}, statuses, "lost requests")
					counts := lim.Stats().Rules["default"]
					t.Logf("%s: %v, %d throttled of %d attempts", persona, time.Since(start), counts.Denied, counts.Allowed+counts.Denied)
				})
			})
		}
	}
}
