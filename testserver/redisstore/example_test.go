package redisstore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/testserver/redisstore"
)

// Three testserver instances (in one process here; normally three machines) enforce one limit of
// 50 requests per hour together, because they share one Redis.
func Example() {
	var servers []*testserver.Server
	for range 3 {
		store, err := redisstore.Open("redis://127.0.0.1:6379/0",
			redisstore.WithPolicy(redisstore.Fallback), redisstore.WithFallbackShare(1.0/3))
		if err != nil {
			log.Fatal(err)
		}
		defer store.Close()
		srv, err := testserver.New(testserver.WithStore(store), testserver.WithRules(
			testserver.Rule{Name: "per-user", Key: testserver.KeyUser, Algorithm: algorithm.NameSlidingLog, Limit: 50, Window: time.Hour}))
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		servers = append(servers, srv)
	}
	for _, s := range servers {
		fmt.Println(s.URL())
	}
}

// When Redis cannot be reached, a rule's policy decides: here fail-closed, so the request is
// denied until the store tries Redis again. The Apply returns within the deadline either way.
func ExampleWithPolicy() {
	store, err := redisstore.Open("redis://127.0.0.1:1/0", // nothing listens there
		redisstore.WithPolicy(redisstore.FailClosed), redisstore.WithTimeout(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	tb, _ := algorithm.New(algorithm.NameTokenBucket, algorithm.Config{Limit: 10, Window: time.Second})
	ds, err := store.Apply(context.Background(), time.Now(), []testserver.StoreCheck{
		{Rule: "api", Scope: "api", Key: "user:7", N: 1, Algorithm: tb},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("allowed:", ds[0].Decision.Allowed, "retry after:", ds[0].Decision.RetryAfter)
	c := store.Counters()
	fmt.Println("errors:", c.Errors, "fail-closed:", c.FailClosed, "circuit:", c.Circuit)
	// Output:
	// allowed: false retry after: 1s
	// errors: 1 fail-closed: 1 circuit: open
}

// ValidateRules rejects at startup a rule whose arithmetic the script cannot keep exact.
func ExampleValidateRules() {
	err := redisstore.ValidateRules([]testserver.Rule{
		{Name: "per-user", Algorithm: algorithm.NameSlidingWindow, Limit: 30_000, Window: 24 * time.Hour},
	})
	fmt.Println(err)
	// Output:
	// redisstore: rule "per-user": limit*window 30000*86400000000µs: redisstore: check not supported: exceeds 2^51 (microseconds): lower the limit or the window, or use another algorithm
}

func ExampleParsePolicy() {
	p, err := redisstore.ParsePolicy("fail-open")
	fmt.Println(p, err)
	_, err = redisstore.ParsePolicy("open")
	fmt.Println(err)
	// Output:
	// fail-open <nil>
	// testserver: ParsePolicy(open): testserver: invalid option: want fallback, fail-open or fail-closed
}
