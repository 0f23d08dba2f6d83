package retryablehttp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	steadyretry "github.com/steadyhttp/steady/adapter/retryablehttp"
)

func TestBackoff(t *testing.T) {
	date := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(http.TimeFormat) }
	// A server an hour ahead: Retry-After is 3s after its own Date, not after ours (4 s with the
	// date's second: ratelimitheader.DateGrain).
	skewed := func() *http.Response {
		now := time.Now().Add(time.Hour).Truncate(time.Second)
		return response("GET", 429, "Date", now.UTC().Format(http.TimeFormat),
			"Retry-After", now.Add(3*time.Second).UTC().Format(http.TimeFormat))
	}
	tests := []struct {
		name     string
		min, max time.Duration
		attempt  int
		resp     func() *http.Response
		lo, hi   time.Duration
	}{
		{"first retry waits min", time.Second, 30 * time.Second, 0, nil, time.Second, time.Second},
		{"second retry up to 2·min", time.Second, 30 * time.Second, 1, nil, time.Second, 2 * time.Second},
		{"fourth retry up to 8·min", time.Second, 30 * time.Second, 3, nil, time.Second, 8 * time.Second},
		{"capped at max", time.Second, 30 * time.Second, 10, nil, time.Second, 30 * time.Second},
		{"huge attempt number", time.Second, 30 * time.Second, 1000, nil, time.Second, 30 * time.Second},
		{"huge max", time.Second, 1<<63 - 1, 200, nil, time.Second, 1<<63 - 1},
		{"max below min", 2 * time.Second, time.Second, 3, nil, 2 * time.Second, 2 * time.Second},
		{"zero min", 0, time.Second, 5, nil, 0, 0},
		{"response without Retry-After", time.Second, 30 * time.Second, 0,
			func() *http.Response { return response("GET", 503) }, time.Second, time.Second},
		{"Retry-After seconds above max", time.Second, 2 * time.Second, 0,
			func() *http.Response { return response("GET", 429, "Retry-After", "5") }, 5 * time.Second, 5500 * time.Millisecond},
		{"Retry-After below min", 10 * time.Second, 30 * time.Second, 4,
			func() *http.Response { return response("GET", 503, "Retry-After", "2") }, 2 * time.Second, 2200 * time.Millisecond},
		// 3 s after the server's Date, and the second a date's instant may lie beyond it.
		{"Retry-After date, skewed server clock", time.Second, 30 * time.Second, 0, skewed, 4 * time.Second, 4400 * time.Millisecond},
		// A date gone by names no wait: the backoff's draw, as without one (no retry storm).
		{"Retry-After date gone by", time.Second, 30 * time.Second, 2,
			func() *http.Response { return response("GET", 429, "Retry-After", date(-time.Minute)) }, time.Second, 4 * time.Second},
		{"Retry-After 0", time.Second, 30 * time.Second, 2,
			func() *http.Response { return response("GET", 429, "Retry-After", "0") }, time.Second, 4 * time.Second},
		{"malformed Retry-After ignored", time.Second, 30 * time.Second, 0,
			func() *http.Response { return response("GET", 429, "Retry-After", "later") }, time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range 200 {
				var resp *http.Response
				if tt.resp != nil {
					resp = tt.resp()
				}
				got := steadyretry.Backoff(tt.min, tt.max, tt.attempt, resp)
				assert.GreaterOrEqual(t, got, tt.lo, fmt.Sprint("draw ", i))
				assert.LessOrEqual(t, got, tt.hi, fmt.Sprint("draw ", i))
			}
		})
	}
}
