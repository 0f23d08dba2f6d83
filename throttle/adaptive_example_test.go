package throttle_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"

	"github.com/steadyhttp/steady/throttle"
)

// An Adaptive limiter learns the server's rate from the first response that declares it, and
// lets what the server says remains go at once. Time is explicit, so the schedule can be read off
// without waiting.
func ExampleNewAdaptive() {
	a, err := throttle.NewAdaptive()
	if err != nil {
		panic(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	r, _ := a.Reserve(now)
	fmt.Printf("first request waits %v; pace %.0f/s until the server has spoken\n", r.Delay(now), a.Rate())
	r, _ = a.Reserve(now)
	fmt.Printf("second request waits %v\n", r.Delay(now))

	// The first response declares 100 requests per second, 40 of them left in this second: all but
	// a reserve of one (room for network jitter) may go at once.
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=100;w=1`)
	h.Set("RateLimit", `"default";r=40;t=1`)
	now = now.Add(10 * time.Millisecond)
	a.Observe(now, &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}, nil)
	fmt.Printf("the server declares %.0f/s; pace %.2f/s\n", a.Stats().ServerRate, a.Rate())
	fmt.Printf("second request now waits %v; %d more may go at once\n", r.Delay(now), a.Stats().Allowance)
	for range a.Stats().Allowance {
		_, _ = a.Reserve(now)
	}
	r, _ = a.Reserve(now)
	fmt.Printf("then the pace: the next one waits %v\n", r.Delay(now).Round(time.Microsecond))
	// Output:
	// first request waits 0s; pace 20/s until the server has spoken
	// second request waits 50ms
	// the server declares 100/s; pace 98.50/s
	// second request now waits 0s; 38 more may go at once
	// then the pace: the next one waits 10.152ms
}

// AdaptiveFactory gives every host its own Adaptive limiter; Throttle.Limiter reads what one has
// learned.
func ExampleAdaptiveFactory() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("RateLimit-Policy", `"default";q=50;w=1`)
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()

	th, err := throttle.New(throttle.WithLimiter(throttle.AdaptiveFactory()))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: throttle.NewTransport(nil, th)}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()

	u, _ := url.Parse(srv.URL)
	a := th.Limiter(u.Host).(*throttle.Adaptive)
	s := a.Stats()
	fmt.Printf("%d answered, server declares %.0f/s, pace %.2f/s\n", s.Successes, s.ServerRate, s.Rate)
	// Output:
	// 5 answered, server declares 50/s, pace 48.76/s
}
