package client_test

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
)

// A client with no options reads the server's rate-limit headers and waits for the next window
// instead of drawing a 429 (and were it throttled, it would wait the Retry-After and try again).
func ExampleNew() {
	srv, err := testserver.New(testserver.WithRules(testserver.Rule{
		Algorithm: "fixed-window", Limit: 1, Window: time.Second,
	}))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c := client.New()
	for range 2 {
		resp, err := c.Get(srv.URL() + "/items")
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	fmt.Println("server denied:", srv.Stats().Rules["default"].Denied)
	// Output:
	// 200 OK
	// 200 OK
	// server denied: 0
}

// retryCounter counts the retries the stack makes.
type retryCounter struct {
	client.NopObserver
	retries atomic.Int64
}

func (r *retryCounter) Retry(*http.Request, int, retry.Reason, time.Duration) { r.retries.Add(1) }

// A client told the server's rate paces itself and is never throttled. Its burst is one less than
// the server's: a cushion for the network, whose latency varies from request to request (the first
// one, which opens the connection, is the slowest), so the server may count a request a little
// earlier than the client sent it.
func ExampleWithTokenBucket() {
	srv, err := testserver.New(testserver.WithRules(testserver.Rule{
		Algorithm: "token-bucket", Limit: 50, Window: time.Second, Burst: 5,
	}))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	obs := &retryCounter{}
	c := client.New(client.WithTokenBucket(50, 4), client.WithObserver(obs))
	ok := 0
	for range 20 {
		resp, err := c.Get(srv.URL())
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			ok++
		}
	}
	fmt.Println("succeeded:", ok, "retries:", obs.retries.Load(), "denied:", srv.Stats().Rules["default"].Denied)
	// Output: succeeded: 20 retries: 0 denied: 0
}

// Validate reports a bad option up front; a client built from it fails every request with the same
// error instead of panicking.
func ExampleValidate() {
	err := client.Validate(client.WithTokenBucket(-5, 1))
	fmt.Println(err)
	// Output: client: invalid option: WithTokenBucket(-5, 1): rate must be positive and finite, burst at least 1
}
