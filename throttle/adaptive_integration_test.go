package throttle

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestAdaptiveAgainstTestserver is a short real-time run against the real testserver on
// loopback: 300 requests from 8 workers at a limit of 400/s, with and without headers, every
// throttled attempt retried through the throttle. It asserts only that every request ends in a
// 200 (none lost) before a generous deadline; the tight ratios are the virtual-time tests' and
// examples/goodput's business.
func TestAdaptiveAgainstTestserver(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time network test")
	}
	for _, headers := range []bool{true, false} {
		name := "no-headers"
		if headers {
			name = "headers"
		}
		t.Run(name, func(t *testing.T) {
			srv := testserver.NewT(t,
				testserver.WithRules(testserver.Rule{Algorithm: algorithm.NameTokenBucket, Limit: 400, Window: time.Second, Burst: 10}),
				testserver.WithHeaders(headers),
			)
			th, err := New(WithLimiter(AdaptiveFactory()))
			require.NoError(t, err)
			base := &http.Transport{MaxIdleConnsPerHost: 8}
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: NewTransport(base, th)}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			const n, workers, maxAttempts = 300, 8, 50
			var next, ok, throttled atomic.Int64
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for next.Add(1) <= n {
						for attempt := 0; attempt < maxAttempts && ctx.Err() == nil; attempt++ {
							req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/item", nil)
							if err != nil {
								t.Error(err)
								return
							}
							resp, err := client.Do(req)
							if err != nil {
								continue
							}
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode == http.StatusOK {
								ok.Add(1)
								break
							}
							throttled.Add(1)
						}
					}
				})
			}
			wg.Wait()
			host := srv.Addr().String()
			a, _ := th.Limiter(host).(*Adaptive)
			require.NotNil(t, a)
			t.Logf("%d ok, %d throttled attempts, learned pace %.1f/s", ok.Load(), throttled.Load(), a.Rate())
			assert.Equal(t, int64(n), ok.Load(), "every request ends in a 200")
			assert.NoError(t, ctx.Err(), "done before the deadline")
		})
	}
}
