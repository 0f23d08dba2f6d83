package queue_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/steadyhttp/steady/queue"
)

// A queue with one place and no waiting line: the second request is refused at once.
func ExampleQueue_Acquire() {
	q, err := queue.New(queue.WithMaxInFlight(1), queue.WithMaxWaiting(0))
	if err != nil {
		panic(err)
	}
	defer q.Close()

	release, err := q.Acquire(context.Background())
	if err != nil {
		panic(err)
	}
	_, err = q.Acquire(context.Background())
	fmt.Println("second request refused:", errors.Is(err, queue.ErrQueueFull))
	fmt.Printf("%+v\n", q.Stats())

	release()
	fmt.Printf("%+v\n", q.Stats())
	// Output:
	// second request refused: true
	// {Waiting:0 InFlight:1 Admitted:1 Refused:1 Cancelled:0}
	// {Waiting:0 InFlight:0 Admitted:1 Refused:1 Cancelled:0}
}

// Wrap an http.Client's transport so that at most four requests are in flight at once; the others
// wait in FIFO order. A request holds its place until its response body is closed.
func ExampleNewTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	q, err := queue.New(queue.WithMaxInFlight(4))
	if err != nil {
		panic(err)
	}
	defer q.Close()
	client := &http.Client{Transport: queue.NewTransport(http.DefaultTransport, q)}
	defer client.CloseIdleConnections()

	resp, err := client.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	fmt.Println("in flight while the body is open:", q.Stats().InFlight)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))
	fmt.Println("in flight after Close:", q.Stats().InFlight)
	// Output:
	// in flight while the body is open: 1
	// hello
	// in flight after Close: 0
}

// Give a request a priority through its context; the Transport reads it from the request's context.
func ExampleWithPriority() {
	ctx := queue.WithPriority(context.Background(), queue.High)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.example.com/status", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(queue.PriorityFromContext(req.Context()))
	fmt.Println(queue.PriorityFromContext(context.Background()))
	// Output:
	// high
	// normal
}
