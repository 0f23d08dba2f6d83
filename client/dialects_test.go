package client

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// TestGitHubSearchFirstDoesNotPinCore: GitHub counts search calls against a quota of their own (30
// a minute) and every other REST call against core (5,000 an hour). Whichever resource answers a
// client's first call, the core calls that follow, on paths never seen before (issue numbers), are
// paced by core's quota: 40 of them take at most the 40 spacings of 5,000 an hour (0.72 s each) and
// the round trips, not a spacing of search's 30 a minute (2 s). The answers are GitHub's headers,
// written here by hand.
func TestGitHubSearchFirstDoesNotPinCore(t *testing.T) {
	for _, first := range []string{"/search/code?q=x", "/repos/o/r"} {
		t.Run(first, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				left := map[string]int{"core": 5000, "search": 30}
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					res, limit := "core", 5000
					if strings.HasPrefix(r.URL.Path, "/search/") {
						res, limit = "search", 30
					}
					left[res]-- // one request at a time: no lock needed
					h := http.Header{}
					h.Set("X-GitHub-Request-Id", "CB4E:1F0A:2C3C7A:5B3C2B:64D3A1B0")
					h.Set("x-ratelimit-limit", strconv.Itoa(limit))
					h.Set("x-ratelimit-remaining", strconv.Itoa(left[res]))
					h.Set("x-ratelimit-used", strconv.Itoa(limit-left[res]))
					h.Set("x-ratelimit-reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
					h.Set("x-ratelimit-resource", res)
					return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
				})
				c := New(WithBase(base))
				get := func(path string) {
					resp, err := c.Get("https://api.github.test" + path)
					if !assert.NoError(t, err) {
						return
					}
					resp.Body.Close()
				}
				get(first)
				start := time.Now()
				for i := range 40 {
					get(fmt.Sprintf("/repos/o/r/issues/%d", i))
				}
				coreSpacing := time.Hour / 5000
				assert.LessOrEqual(t, time.Since(start), 41*coreSpacing, "40 core calls after %s", first)
			})
		})
	}
}
