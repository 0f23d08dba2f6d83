package redisstore

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestThreeServersOneLimit: three testserver instances, each with its own Store on one Redis, take
// 200 concurrent requests spread over them under a hard limit of 50 per hour: exactly 50 are
// admitted, for every algorithm — also when the instances' clocks are an hour apart, because
// Redis's TIME decides. The contrast cases show the skew is real: with the requests sent instance
// by instance in clock order, deciding by the instances' own clocks (WithCallerClock) gives each
// instance its own fixed-window hour and admits 150, while Redis's TIME still admits 50.
func TestThreeServersOneLimit(t *testing.T) {
	url := redistest.URL(t)
	type tc struct {
		name        string
		alg         string
		skew        bool
		callerClock bool
		phased      bool // one instance after another, in clock order, instead of all at once
		want        int
	}
	var cases []tc
	for _, name := range algorithm.Names() {
		cases = append(cases, tc{name, name, false, false, false, 50}, tc{name + "/skewed-clocks", name, true, false, false, 50})
	}
	cases = append(cases,
		tc{"contrast/fixed-window/skewed-clocks-phased", algorithm.NameFixedWindow, true, false, true, 50},
		tc{"contrast/fixed-window/skewed-caller-clocks-phased", algorithm.NameFixedWindow, true, true, true, 150})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix := uniquePrefix(t)
			var urls []string
			for i := range 3 {
				opts := []Option{WithKeyPrefix(prefix), WithPolicy(FailClosed), WithTimeout(time.Minute),
					WithErrorHook(func(err error) { t.Errorf("instance %d: Redis failed: %v", i, err) })}
				if c.callerClock {
					opts = append(opts, WithCallerClock())
				}
				st := openStore(t, url, opts...)
				sopts := []testserver.Option{
					testserver.WithStore(st),
					testserver.WithRules(testserver.Rule{Name: "per-hour", Algorithm: c.alg, Limit: 50, Window: time.Hour}),
				}
				if c.skew {
					offset := time.Duration(i-1) * time.Hour
					sopts = append(sopts, testserver.WithClock(func() time.Time { return time.Now().Add(offset) }))
				}
				urls = append(urls, testserver.NewT(t, sopts...).URL())
			}
			var ok, throttled int
			if c.phased {
				for i, u := range urls {
					o, th := hammer(t, []string{u}, []int{67, 67, 66}[i])
					ok, throttled = ok+o, throttled+th
				}
			} else {
				ok, throttled = hammer(t, urls, 200)
			}
			if ok != c.want || throttled != 200-c.want {
				t.Fatalf("admitted %d, throttled %d of 200; want %d admitted", ok, throttled, c.want)
			}
		})
	}
}

// hammer sends n concurrent GETs, spread round-robin over urls, released together, and counts the
// 200s and 429s (anything else fails the test).
func hammer(t *testing.T, urls []string, n int) (ok, throttled int) {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := client.Get(fmt.Sprintf("%s/item/%d", urls[i%len(urls)], i))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				throttled++
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	close(start)
	wg.Wait()
	return ok, throttled
}
