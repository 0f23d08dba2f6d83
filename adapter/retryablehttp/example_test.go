package retryablehttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	hashicorp "github.com/hashicorp/go-retryablehttp"

	steadyretry "github.com/steadyhttp/steady/adapter/retryablehttp"
)

// A retryablehttp client with steady's rules: a throttled POST is sent again once the server's
// Retry-After has passed (here 1s), and a POST whose answer is a 502 is not, since the server may
// have processed it.
func Example() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests) // proves the POST was not processed
		case 2:
			w.WriteHeader(http.StatusCreated)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()

	c := hashicorp.NewClient()
	c.Logger = nil
	c.CheckRetry = steadyretry.CheckRetry
	c.Backoff = steadyretry.Backoff

	for range 2 {
		resp, err := c.Post(srv.URL, "application/json", []byte(`{"amount":5}`))
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "after", calls.Load(), "requests in all")
	}
	// Output:
	// 201 after 2 requests in all
	// 502 after 3 requests in all
}
