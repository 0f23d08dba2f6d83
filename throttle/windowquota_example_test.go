package throttle_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/steadyhttp/steady/throttle"
)

// A quota of 3 requests per second, usable at any moment of the window: seven requests at once go
// in bursts one window apart. Requests that come later than their earliest slot go at once, and
// each later one waits one window after the one 3 places before it, counted from when that one
// really went (3.5s for the last request, not 3s).
func ExampleNewWindowQuota() {
	l, err := throttle.NewWindowQuota(3, time.Second)
	if err != nil {
		panic(err)
	}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 7 {
		r, _ := l.Reserve(start)
		fmt.Printf("request %d at 0s goes at %v\n", i, r.Delay(start))
	}
	late := start.Add(2500 * time.Millisecond)
	for i := 7; i < 11; i++ {
		r, _ := l.Reserve(late)
		fmt.Printf("request %d at 2.5s goes at %v\n", i, late.Add(r.Delay(late)).Sub(start))
	}
	// Output:
	// request 0 at 0s goes at 0s
	// request 1 at 0s goes at 0s
	// request 2 at 0s goes at 0s
	// request 3 at 0s goes at 1s
	// request 4 at 0s goes at 1s
	// request 5 at 0s goes at 1s
	// request 6 at 0s goes at 2s
	// request 7 at 2.5s goes at 2.5s
	// request 8 at 2.5s goes at 2.5s
	// request 9 at 2.5s goes at 3s
	// request 10 at 2.5s goes at 3.5s
}

// Invalid arguments give errors matchable with errors.Is, never a panic.
func ExampleNewWindowQuota_invalid() {
	_, err := throttle.NewWindowQuota(0, time.Minute)
	fmt.Println(errors.Is(err, throttle.ErrInvalidBurst))
	fmt.Println(err)
	_, err = throttle.NewWindowQuota(100, 0)
	fmt.Println(errors.Is(err, throttle.ErrInvalidRate))
	fmt.Println(err)
	// Output:
	// true
	// throttle: burst must be at least 1: got a window quota limit of 0
	// true
	// throttle: rate must be a positive, finite number of requests per second: got a window quota window of 0s (a window must be positive and at most 366 days)
}
