package algorithm_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// A store keeps one State per key and asks the rule's algorithm, passing the time explicitly.
func ExampleNew() {
	limiter, err := algorithm.New("fixed-window", algorithm.Config{Limit: 2, Window: time.Minute})
	if err != nil {
		panic(err)
	}
	var key algorithm.State // the zero State is a fresh key
	now := time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC)
	for range 3 {
		d := limiter.Decide(&key, now, 1)
		if d.Allowed {
			limiter.Commit(&key, now, 1)
		}
		fmt.Printf("allowed=%v remaining=%d retry-after=%v reset-after=%v\n", d.Allowed, d.Remaining, d.RetryAfter, d.ResetAfter)
	}
	// Output:
	// allowed=true remaining=1 retry-after=0s reset-after=30s
	// allowed=true remaining=0 retry-after=0s reset-after=30s
	// allowed=false remaining=0 retry-after=30s reset-after=30s
}

// A token bucket of 3 refilled at 1 per second: the burst goes at once, then one per second, and a
// request retried exactly at its RetryAfter is admitted.
func ExampleNewTokenBucket() {
	bucket, err := algorithm.NewTokenBucket(algorithm.Config{Limit: 1, Window: time.Second, Burst: 3})
	if err != nil {
		panic(err)
	}
	var key algorithm.State
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 4 {
		d := bucket.Decide(&key, now, 1)
		if d.Allowed {
			bucket.Commit(&key, now, 1)
		}
		fmt.Println(d.Allowed, d.RetryAfter)
		if !d.Allowed {
			now = now.Add(d.RetryAfter)
			fmt.Println(bucket.Decide(&key, now, 1).Allowed)
		}
	}
	// Output:
	// true 0s
	// true 0s
	// true 0s
	// false 1s
	// true
}

// A leaky bucket admits its queue's worth at once; a shaping server holds each answer for Delay.
func ExampleNewLeakyBucket() {
	queue, err := algorithm.NewLeakyBucket(algorithm.Config{Limit: 50, Window: time.Hour, Burst: 3})
	if err != nil {
		panic(err)
	}
	var key algorithm.State
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 4 {
		d := queue.Decide(&key, now, 1)
		if d.Allowed {
			queue.Commit(&key, now, 1)
			fmt.Println("admitted, slot in", d.Delay)
		} else {
			fmt.Println("denied, retry in", d.RetryAfter)
		}
	}
	// Output:
	// admitted, slot in 0s
	// admitted, slot in 1m12s
	// admitted, slot in 2m24s
	// denied, retry in 1m12s
}

// Elastic mode: decide against the base limit, and while the server has spare capacity against a
// higher ceiling, on the same State.
func ExampleScale() {
	base, err := algorithm.NewSlidingLog(algorithm.Config{Limit: 100, Window: time.Minute})
	if err != nil {
		panic(err)
	}
	ceiling, err := algorithm.Scale(base, 150)
	if err != nil {
		panic(err)
	}
	var key algorithm.State
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	take := func(limiter algorithm.Algorithm) (admitted int) {
		for limiter.Decide(&key, now, 1).Allowed {
			limiter.Commit(&key, now, 1)
			admitted++
		}
		return admitted
	}
	fmt.Println("admitted at the base limit:", take(base))
	fmt.Println("admitted more with spare capacity:", take(ceiling))
	fmt.Println("base limit now allows:", base.Decide(&key, now, 1).Allowed)
	// Output:
	// admitted at the base limit: 100
	// admitted more with spare capacity: 50
	// base limit now allows: false
}

func ExampleNames() {
	fmt.Println(algorithm.Names())
	_, err := algorithm.New("token_bucket", algorithm.Config{Limit: 1, Window: time.Second})
	fmt.Println(errors.Is(err, algorithm.ErrUnknownAlgorithm))
	// Output:
	// [token-bucket leaky-bucket fixed-window sliding-log sliding-window]
	// true
}
