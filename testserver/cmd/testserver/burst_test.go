package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/redistest"
)

// The burst of issue 12: three instances on one Redis, a token bucket of 50 per hour (burst 50),
// and bursts of 600 concurrent requests spread evenly over the three.
const (
	burstInstances = 3
	burstLimit     = 50
	burstRequests  = 600
)

// TestRedisBurstExact: three testserver instances sharing one Redis admit exactly the limit out
// of every burst of 600 concurrent requests, with Redis on loopback and with Redis 15 ms away each
// way (a 30 ms round trip, inside the default 50 ms deadline): a burst shares round trips instead
// of queueing for connections, and a slow round trip is latency, not failure, so no decision
// falls to the store-down policy. Each burst uses its own key (header X-Burst), so each starts
// from a full bucket without flushing Redis. The test counts admissions; it asserts no speed, but
// it needs every round trip within its deadline: under the race detector, with the other packages
// testing beside it on two cores, a round trip can take longer than the 250 ms deadline, and a
// decision that misses it is the policy's (counted, bounded, and not what this test is about), so
// it skips there; .ci/run runs it again without the race detector after the suite.
func TestRedisBurstExact(t *testing.T) {
	if raceEnabled {
		t.Skip("needs round trips within their deadline: run without -race (.ci/run does)")
	}
	bursts := 20
	if testing.Short() {
		bursts = 3
	}
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name   string
		oneWay time.Duration
	}{{"loopback", 0}, {"30ms-rtt", 15 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			addr := srv.Addr()
			if tc.oneWay > 0 {
				addr = redistest.Delay(t, addr, tc.oneWay)
			}
			url := "redis://" + addr + "/0"
			var ins []*instance
			for range burstInstances {
				in := start(t, "-store", url, "-algorithm", "token-bucket", "-limit", fmt.Sprint(burstLimit),
					"-window", "1h", "-burst", fmt.Sprint(burstLimit), "-key", "header:X-Burst")
				if line := in.stderr.waitLine(t, "testserver: store ", in.exited); !strings.Contains(line, "Redis answers") {
					t.Fatalf("instance started without Redis: %s", line)
				}
				ins = append(ins, in)
			}
			for b := range bursts {
				key := fmt.Sprintf("%s-%d-%d", tc.name, time.Now().UnixNano(), b)
				codes := burst(t, ins, burstRequests, key)
				if codes[http.StatusOK] != burstLimit || codes[http.StatusOK]+codes[http.StatusTooManyRequests] != burstRequests {
					t.Errorf("burst %d of %d: status counts %v, want %d × 200 and the rest 429", b+1, bursts, codes, burstLimit)
				}
			}
			// /metrics tells the same: every admission counted, no missed deadline, circuit closed.
			var allowed int
			for i, in := range ins {
				resp, body := in.get(t, "/metrics")
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("/metrics: %s", resp.Status)
				}
				for _, want := range []string{"steady_testserver_store_timeouts_total 0\n", `steady_testserver_store_circuit{state="closed"} 1` + "\n",
					"steady_testserver_decision_seconds_count "} {
					if !strings.Contains(body, want) {
						t.Errorf("instance %d: /metrics lacks %q", i, want)
					}
				}
				const line = `steady_testserver_requests_total{outcome="allowed",rule="default"} `
				if _, rest, ok := strings.Cut(body, line); ok {
					n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, '\n')])
					allowed += n
				}
			}
			if allowed != bursts*burstLimit {
				t.Errorf("/metrics of the three instances count %d admitted, want %d", allowed, bursts*burstLimit)
			}
			for i, in := range ins {
				if sh := in.stats(t).Store.Shared; sh == nil || sh.Timeouts != 0 || sh.Errors != 0 || sh.PolicyDecisions() != 0 {
					t.Errorf("instance %d: store counters %+v, want no timeout, error or policy decision; stderr:\n%.2000s", i, sh, in.stderr.String())
				}
			}
		})
	}
}

// burst sends n concurrent GETs spread evenly over ins, all with header X-Burst: key, released
// together, and returns how many got each status (-1 counts transport errors, reported too).
func burst(t *testing.T, ins []*instance, n int, key string) map[int]int {
	t.Helper()
	codes := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		in := ins[i%len(ins)]
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodGet, in.url+"/", nil)
			if err != nil {
				t.Error(err)
				codes[i] = -1
				return
			}
			req.Header.Set("X-Burst", key)
			<-start
			resp, err := in.client.Do(req)
			if err != nil {
				t.Error(err)
				codes[i] = -1
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	close(start)
	wg.Wait()
	out := map[int]int{}
	for _, c := range codes {
		out[c]++
	}
	return out
}
