package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
)

// attemptPrinter is an Observer that also implements the optional AttemptObserver: it sees each
// attempt begin and end (package otelsteady uses the same hook for a span per attempt).
type attemptPrinter struct{ client.NopObserver }

type startedKey struct{}

func (attemptPrinter) AttemptStarted(ctx context.Context, a client.AttemptInfo) context.Context {
	fmt.Printf("attempt %d to %s (sent again %d times)\n", a.Number, a.Key, a.Number-1)
	return context.WithValue(ctx, startedKey{}, a.Number) // the attempt's own context
}

func (attemptPrinter) AttemptEnded(ctx context.Context, a client.AttemptResult) {
	fmt.Printf("attempt %d ended: %d (context of attempt %v)\n", a.Number, a.Response.StatusCode, ctx.Value(startedKey{}))
}

// An AttemptObserver sees a request answered 503 and then 200 as two attempts.
func ExampleAttemptObserver() {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	c := client.New(client.WithObserver(attemptPrinter{}), client.WithKeyFunc(func(*http.Request) string { return "api" }),
		client.WithRetry(retry.WithBaseDelay(time.Millisecond)))
	resp, err := c.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	// Output:
	// attempt 1 to api (sent again 0 times)
	// attempt 1 ended: 503 (context of attempt 1)
	// attempt 2 to api (sent again 1 times)
	// attempt 2 ended: 200 (context of attempt 2)
}
