package redisthrottle_test

import (
	"fmt"
	"io"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/throttle/redisthrottle"
)

// Three reservations at one instant, with Redis unreachable: the limiter paces locally at its
// share of the rate (here half of 10/s), and says so in its Stats. With Redis up, the same calls
// book slots shared by every process using the key.
func ExampleNew() {
	opts, err := redisthrottle.ClientOptions("redis://127.0.0.1:1/0") // nothing listens there
	if err != nil {
		panic(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()

	l, err := redisthrottle.New(rdb, "api.example.com", redisthrottle.WithRate(10, 1), redisthrottle.WithFallbackShare(0.5))
	if err != nil {
		panic(err)
	}
	now := time.Now()
	for range 3 {
		r, _ := l.Reserve(now)
		fmt.Println(r.Delay(now))
	}
	s := l.Stats()
	fmt.Println("from Redis:", s.Redis, "local:", s.Fallback, "failed calls:", s.Errors)
	// Output:
	// 0s
	// 200ms
	// 400ms
	// from Redis: 0 local: 3 failed calls: 1
}

// A client whose pace per host is shared with every process that uses the same Redis and prefix.
// Here Redis is unreachable, so the requests are paced locally, and still all succeed.
func ExampleFactory() {
	srv, err := testserver.New(testserver.WithRules(testserver.Rule{Limit: 50, Window: time.Second, Burst: 5}))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	opts, err := redisthrottle.ClientOptions("redis://127.0.0.1:1/0") // use your Redis here
	if err != nil {
		panic(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()

	c := client.New(client.WithLimiter(redisthrottle.Factory(rdb, "steady:", redisthrottle.WithRate(50, 1))))
	defer c.CloseIdleConnections()
	for range 5 {
		resp, err := c.Get(srv.URL() + "/items")
		if err != nil {
			panic(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 200 OK
	// 200 OK
	// 200 OK
	// 200 OK
	// 200 OK
}
