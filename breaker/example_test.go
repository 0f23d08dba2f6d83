package breaker_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
)

// Fail fast: after three failures in a row the host's circuit opens, and the next call fails at once
// with ErrCircuitOpen without reaching the server.
func Example_failFast() {
	var arrivals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := client.New(client.WithoutPace(), client.WithRetry(retry.WithMaxAttempts(1)),
		client.WithBreaker(breaker.WithMode(breaker.FailFast), breaker.WithMinRequests(3), breaker.WithCooldown(time.Minute)))

	for range 4 {
		resp, err := c.Get(srv.URL)
		if err != nil {
			fmt.Println("circuit open:", errors.Is(err, breaker.ErrCircuitOpen))
			continue
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	fmt.Println("the server saw", arrivals.Load())
	// Output:
	// 503 Service Unavailable
	// 503 Service Unavailable
	// 503 Service Unavailable
	// circuit open: true
	// the server saw 3
}

// Pause: a call to an open circuit waits out the cool-down, goes as the probe, and closes the circuit
// when the server is back; the observer sees each change.
func Example_pause() {
	var arrivals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrivals.Add(1) <= 3 { // down for three requests
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c := client.New(client.WithoutPace(), client.WithBreaker(
		breaker.WithMinRequests(3), breaker.WithCooldown(20*time.Millisecond),
		breaker.WithObserver(func(e breaker.Event) { fmt.Println("circuit:", e.From, "->", e.To) })))

	for range 4 {
		resp, err := c.Get(srv.URL)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 500 Internal Server Error
	// 500 Internal Server Error
	// circuit: closed -> open
	// 500 Internal Server Error
	// circuit: open -> half-open
	// circuit: half-open -> closed
	// 200 OK
}
