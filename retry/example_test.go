package retry_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// A client whose requests survive a flaky server: the first two attempts draw 503, the third
// succeeds.
func ExampleNewTransport() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	tr, err := retry.NewTransport(http.DefaultTransport,
		retry.WithMaxAttempts(4),
		retry.WithBaseDelay(10*time.Millisecond), // the default is 200ms
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: tr}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body), "after", calls.Load(), "attempts")
	// Output: 200 hello after 3 attempts
}

// A POST is sent again after its connection broke only when it carries an Idempotency-Key;
// WithIdempotencyKeys adds one, the same on every attempt.
func ExampleWithIdempotencyKeys() {
	var calls atomic.Int32
	keys := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
		if calls.Add(1) == 1 { // the connection breaks before the first answer
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	tr, err := retry.NewTransport(http.DefaultTransport, retry.WithIdempotencyKeys(),
		retry.WithBaseDelay(time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: tr}
	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{"amount":5}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	first, second := <-keys, <-keys
	fmt.Println(resp.StatusCode, "after", calls.Load(), "attempts; same key:", first == second && first != "")
	// Output: 201 after 2 attempts; same key: true
}

// When no attempt obtained a response, the error says why retrying stopped and what failed last.
func ExampleError() {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there any more: connections are refused

	tr, _ := retry.NewTransport(http.DefaultTransport, retry.WithMaxAttempts(3),
		retry.WithBaseDelay(time.Millisecond))
	client := &http.Client{Transport: tr}
	_, err := client.Get(url)

	var rerr *retry.Error
	if errors.As(err, &rerr) {
		fmt.Println("attempts:", len(rerr.Attempts))
	}
	fmt.Println("exhausted:", errors.Is(err, retry.ErrAttemptsExhausted))
	fmt.Println("refused:", errors.Is(err, syscall.ECONNREFUSED))
	// Output:
	// attempts: 3
	// exhausted: true
	// refused: true
}
