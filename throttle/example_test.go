package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/throttle"
)

// A token bucket of 2 requests per second with bursts of 2: two requests go at once, then one
// every 500ms. Time is explicit, so the schedule can be read off without waiting.
func ExampleNewTokenBucket() {
	l, err := throttle.NewTokenBucket(2, 2)
	if err != nil {
		panic(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 4 {
		r, _ := l.Reserve(now)
		fmt.Printf("request %d waits %v\n", i, r.Delay(now))
	}
	// Output:
	// request 0 waits 0s
	// request 1 waits 0s
	// request 2 waits 500ms
	// request 3 waits 1s
}

// A leaky bucket of 4 requests per second with a backlog of 2: requests are spaced 250ms apart,
// never in a burst, and the one that finds two already waiting is refused.
func ExampleNewLeakyBucket() {
	l, err := throttle.NewLeakyBucket(4, 2)
	if err != nil {
		panic(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 4 {
		r, err := l.Reserve(now)
		var full *throttle.BacklogFullError
		if errors.As(err, &full) {
			fmt.Printf("request %d refused: %d already waiting\n", i, full.Backlog)
			continue
		}
		fmt.Printf("request %d waits %v\n", i, r.Delay(now))
	}
	// Output:
	// request 0 waits 0s
	// request 1 waits 250ms
	// request 2 waits 500ms
	// request 3 refused: 2 already waiting
}

// Wait fails fast, without sleeping, when the wait could not end before the context's deadline.
func ExampleWait() {
	l, _ := throttle.NewTokenBucket(1, 1) // one request per second
	_ = throttle.Wait(context.Background(), l)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := throttle.Wait(ctx, l)
	var tooLong *throttle.WouldExceedDeadlineError
	fmt.Println(errors.As(err, &tooLong), errors.Is(err, context.DeadlineExceeded))
	// Output: true true
}

// A server answers 429 with Retry-After: 3600. The Transport pauses that host, so the next request,
// which cannot wait an hour, is refused at once instead of hammering the server.
func ExampleNewTransport() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	th, err := throttle.New(throttle.WithLimiter(func(host string) (throttle.Limiter, error) {
		return throttle.NewTokenBucket(50, 10) // our own pace per host, on top of pauses
	}))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: throttle.NewTransport(nil, th)}
	defer client.CloseIdleConnections()

	resp, err := client.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	_, err = client.Do(req)
	fmt.Println("refused:", errors.Is(err, context.DeadlineExceeded))
	fmt.Println("requests the server saw:", hits.Load())
	// Output:
	// 429 Too Many Requests
	// refused: true
	// requests the server saw: 1
}

// Pause holds back one key; keys are hosts by default.
func ExampleThrottle_Pause() {
	th, _ := throttle.New()
	th.Pause("api.example.com", time.Now().Add(time.Minute))

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(th.Wait(ctx, "api.example.com") != nil) // would wait a minute: refused at once
	fmt.Println(th.Wait(ctx, "other.example.com"))      // not paused
	// Output:
	// true
	// <nil>
}
