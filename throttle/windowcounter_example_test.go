package throttle_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/steadyhttp/steady/throttle"
)

// A server counts 3 requests per second in a sliding window counter, on windows aligned to the
// Unix epoch, and the client starts half-way through a window: three go at once, then each waits
// until the previous window's weight, prev×(1s−elapsed), leaves room for it. The next window
// begins 0.5 s after the start; the three weigh 3×⅔ s there a third of the way in, leaving room
// for one (at 0.833 s), and 3×⅓ s two thirds in, room for a second; the window after that holds
// two, and so on (a counter sustains limit−1 per window).
func ExampleNewWindowCounter() {
	l, err := throttle.NewWindowCounter(3, time.Second)
	if err != nil {
		panic(err)
	}
	start := time.Date(2030, 1, 1, 0, 0, 0, 500_000_000, time.UTC) // half-way through a second
	for i := range 9 {
		r, _ := l.Reserve(start)
		fmt.Printf("request %d goes at %v\n", i, r.Delay(start))
	}
	// Output:
	// request 0 goes at 0s
	// request 1 goes at 0s
	// request 2 goes at 0s
	// request 3 goes at 833.333334ms
	// request 4 goes at 1.166666667s
	// request 5 goes at 1.5s
	// request 6 goes at 2s
	// request 7 goes at 2.5s
	// request 8 goes at 3s
}

// Invalid arguments give errors matchable with errors.Is, never a panic.
func ExampleNewWindowCounter_invalid() {
	_, err := throttle.NewWindowCounter(0, time.Minute)
	fmt.Println(errors.Is(err, throttle.ErrInvalidBurst))
	_, err = throttle.NewWindowCounter(100, 400*24*time.Hour)
	fmt.Println(errors.Is(err, throttle.ErrInvalidRate))
	fmt.Println(err)
	// Output:
	// true
	// true
	// throttle: rate must be a positive, finite number of requests per second: got a window counter window of 9600h0m0s (a window must be positive and at most 366 days)
}
