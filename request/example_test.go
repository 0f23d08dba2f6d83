package request_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/throttle"
)

// get sends a GET with ctx through c and prints its outcome.
func get(c *http.Client, ctx context.Context, url string) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		panic(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		fmt.Println("error:", errors.Unwrap(err)) // without the *url.Error's method and URL
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) == 0 {
		fmt.Println(resp.Status)
		return
	}
	fmt.Println(resp.Status, string(body))
}

// One call that must not be retried, among calls that are: the server is down (503) and each call
// reports how many attempts it made.
func ExampleWithAttempts() {
	var arrivals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := client.New(client.WithoutPace(), client.WithRetry(retry.WithMaxAttempts(3), retry.WithBaseDelay(time.Millisecond)))

	get(c, context.Background(), srv.URL)
	fmt.Println("attempts:", arrivals.Swap(0))
	get(c, request.WithAttempts(context.Background(), 1), srv.URL)
	fmt.Println("attempts:", arrivals.Swap(0))
	// Output:
	// 503 Service Unavailable
	// attempts: 3
	// 503 Service Unavailable
	// attempts: 1
}

// A call that would rather fail than wait long for its host's pause (here set by hand; usually a
// server's Retry-After), while the client's other calls wait up to the default minute.
func ExampleWithMaxWait() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	tr := client.NewTransport(nil, client.WithoutPace())
	c := &http.Client{Transport: tr}
	host := srv.Listener.Addr().String()
	tr.Throttle().Pause(host, time.Now().Add(30*time.Second))

	ctx := request.WithMaxWait(context.Background(), time.Second)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	_, err := c.Do(req)
	fmt.Println("refused at once:", errors.Is(err, throttle.ErrWaitTooLong))

	tr.Throttle().Resume(host)
	get(c, ctx, srv.URL)
	// Output:
	// refused at once: true
	// 200 OK ok
}

// A call with a tight per-attempt timeout: the server hangs on the first attempt, which is abandoned
// after 50ms, and answers the second.
func ExampleWithAttemptTimeout() {
	var arrivals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrivals.Add(1) == 1 {
			<-r.Context().Done() // until the client hangs up
			return
		}
		io.WriteString(w, "second attempt")
	}))
	defer srv.Close()
	c := client.New(client.WithoutPace())

	get(c, request.WithAttemptTimeout(context.Background(), 50*time.Millisecond), srv.URL)
	fmt.Println("attempts:", arrivals.Load())
	// Output:
	// 200 OK second attempt
	// attempts: 2
}

// Calls for two tenants of one API host, paced and paused per tenant: a pause of tenant-a (a
// Retry-After its calls drew) does not hold back tenant-b.
func ExampleWithKey() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	tr := client.NewTransport(nil, client.WithoutPace())
	c := &http.Client{Transport: tr}
	tr.Throttle().Pause("tenant-a", time.Now().Add(time.Hour))

	get(c, request.WithKey(context.Background(), "tenant-a"), srv.URL)
	get(c, request.WithKey(context.Background(), "tenant-b"), srv.URL)
	// Output:
	// error: throttle: "tenant-a" would wait 1h0m0s for its pause (the server's Retry-After), longer than the maximum wait of 1m0s
	// 200 OK ok
}

// A call's cost (tokens of an LLM API) travels with it through the stack, for a pacer that weighs
// calls; here a base RoundTripper reads it.
func ExampleWithCost() {
	base := roundTripper(func(req *http.Request) (*http.Response, error) {
		cost, ok := request.From(req.Context()).Cost()
		fmt.Println("cost:", cost, ok)
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	})
	c := &http.Client{Transport: client.NewTransport(base, client.WithoutPace())}
	get(c, request.WithCost(context.Background(), 250), "http://api.example/v1/complete")
	// Output:
	// cost: 250 true
	// 200 OK
}

// A bad value fails the call with an error matching ErrInvalid; nothing is sent.
func ExampleSettings_Err() {
	c := client.New()
	req, _ := http.NewRequestWithContext(request.WithAttempts(context.Background(), 0), "GET", "http://api.example/", nil)
	_, err := c.Do(req)
	fmt.Println(errors.Is(err, request.ErrInvalid))
	// Output:
	// true
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
