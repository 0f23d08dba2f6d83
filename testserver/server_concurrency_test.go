package testserver

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/stretchr/testify/assert"
)

// fire sends n concurrent GETs to url and returns the responses' statuses and headers.
func fire(t *testing.T, client *http.Client, url string, n int) (statuses []int, headers []http.Header) {
	t.Helper()
	statuses = make([]int, n)
	headers = make([]http.Header, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := client.Get(url)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			statuses[i] = resp.StatusCode
			headers[i] = resp.Header
		})
	}
	wg.Wait()
	return statuses, headers
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// TestConcurrentAdmissions is the acceptance check, in process: 200 concurrent requests at
// limit 50 per hour, burst 50, for every algorithm and mode.
func TestConcurrentAdmissions(t *testing.T) {
	modes := []struct {
		mode Mode
		soft int64
		want int
	}{
		{ModeHard, 0, 50},
		{ModeSoft, 10, 55},
		{ModeShadow, 0, 200},
	}
	for _, alg := range algorithm.Names() {
		for _, m := range modes {
			t.Run(fmt.Sprintf("%s/%s", alg, m.mode), func(t *testing.T) {
				now := time.Unix(1_700_000_000, 0) // fixed: no window edge moves under the test
				s := NewT(t, WithClock(func() time.Time { return now }), WithRules(Rule{
					Name: "api", Algorithm: alg, Limit: 50, Window: time.Hour, Burst: 50,
					Mode: m.mode, SoftPercent: m.soft,
				}))
				statuses, headers := fire(t, newClient(t), s.URL()+"/v1/items", 200)
				ok := 0
				for i, st := range statuses {
					h := headers[i]
					switch st {
					case http.StatusOK:
						ok++
					case http.StatusTooManyRequests:
						ra, err := strconv.Atoi(h.Get("Retry-After"))
						if assert.NoError(t, err, "Retry-After %q", h.Get("Retry-After")) {
							assert.GreaterOrEqual(t, ra, 1)
						}
						info := ratelimitheader.Parse(h, now)
						assert.Equal(t, int64(50), info.Limit)
						assert.Equal(t, time.Hour, info.Window)
						assert.True(t, info.HasRemaining)
						assert.Equal(t, int64(0), info.Remaining)
						assert.Equal(t, "application/problem+json", h.Get("Content-Type"))
					default:
						t.Errorf("unexpected status %d", st)
					}
					if h != nil {
						assert.NotEmpty(t, h.Get("RateLimit-Policy"), "every response advertises the policy")
						assert.NotEmpty(t, h.Get("RateLimit"), "every response carries RateLimit")
					}
				}
				assert.Equal(t, m.want, ok)
				st := s.Stats()
				rc := st.Rules["api"]
				switch m.mode {
				case ModeShadow:
					assert.Equal(t, Counters{Allowed: 50, Shadowed: 150}, rc)
				default:
					assert.Equal(t, Counters{Allowed: int64(m.want), Denied: int64(200 - m.want)}, rc)
				}
			})
		}
	}
}
