package redisstore

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// hangingRedis is a "Redis" that accepts connections and reads every command but never answers:
// the slowest Redis there is. Its connections are in-memory pipes, so it works inside a
// testing/synctest bubble, where the deadlines run on virtual time.
type hangingRedis struct {
	dials atomic.Int64
	read  atomic.Int64 // bytes received
	wg    sync.WaitGroup
}

func (h *hangingRedis) dial(context.Context, string, string) (net.Conn, error) {
	h.dials.Add(1)
	client, server := net.Pipe()
	h.wg.Go(func() {
		buf := make([]byte, 4096)
		for {
			n, err := server.Read(buf) // until the client closes its end
			h.read.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	return client, nil
}

// TestDeadlineAndCircuit: against a Redis that never answers, every Apply returns by the deadline
// (exactly, in virtual time) decided by policy, and the next still asks Redis: one missed
// deadline is latency, not an outage. Only when failures have persisted for the failure window
// does the circuit open; then the next Applies stay off Redis (no dial, no bytes, no wait) until
// the retry interval has passed, when one Apply probes again. Both ways of honouring the deadline
// are covered: a client with ContextTimeoutEnabled, and one without (the store then stops waiting
// and leaves the call to the client's own ReadTimeout, and Close waits for it).
func TestDeadlineAndCircuit(t *testing.T) {
	for _, ctxTimeout := range []bool{true, false} {
		name := map[bool]string{true: "context-timeouts", false: "no-context-timeouts"}[ctxTimeout]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const (
					timeout = 50 * time.Millisecond
					window  = 200 * time.Millisecond
					retry   = time.Second
				)
				var fake hangingRedis
				client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", Dialer: fake.dial,
					ContextTimeoutEnabled: ctxTimeout, ReadTimeout: 3 * time.Second, MaxRetries: -1})
				st, err := New(client, WithTimeout(timeout), WithRetryInterval(retry), WithFailureWindow(window),
					WithPolicy(FailClosed), WithPipelines(1))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					_ = st.Close()
					_ = client.Close()
					fake.wg.Wait()
				})
				checks := []testserver.StoreCheck{{Rule: "r", Scope: "s", Key: "k", N: 1,
					Algorithm: mustAlg(t, algorithm.NameTokenBucket, 10, time.Second, 0)}}
				applyTimed := func() (testserver.StoreDecision, time.Duration) {
					t.Helper()
					start := time.Now()
					ds, err := st.Apply(context.Background(), start, checks)
					if err != nil {
						t.Fatalf("Apply: %v", err)
					}
					return ds[0], time.Since(start)
				}
				synctest.Wait()
				read := fake.read.Load()

				// Redis hangs: each Apply gives up at the deadline and denies (fail-closed), and
				// the circuit stays closed while the failures span less than the window: the
				// 1st at 50 ms, ..., the 5th at 250 ms, 200 ms after the 1st.
				for i := range 5 {
					d, took := applyTimed()
					if took != timeout || d.Decision.Allowed || d.Decision.RetryAfter != retry {
						t.Fatalf("hanging Redis, Apply %d: took %v (deadline %v), decision %+v", i+1, took, timeout, d.Decision)
					}
					want := circuitClosed
					if i == 4 {
						want = circuitOpen
					}
					if c := st.Counters(); c.Circuit != want {
						t.Fatalf("after %d missed deadlines (%v of failures): circuit %s, want %s", i+1, time.Duration(i)*timeout, c.Circuit, want)
					}
				}
				synctest.Wait()
				if fake.read.Load() == read {
					t.Fatal("the Applies did not reach Redis")
				}
				// The circuit is open: decided at once, Redis left alone.
				dials, read := fake.dials.Load(), fake.read.Load()
				for range 3 {
					time.Sleep(retry / 4)
					if d, took := applyTimed(); took != 0 || d.Decision.Allowed {
						t.Fatalf("circuit open: took %v, decision %+v", took, d.Decision)
					}
				}
				synctest.Wait()
				if fake.dials.Load() != dials || fake.read.Load() != read {
					t.Fatalf("Redis contacted while the circuit was open: dials %d->%d, bytes %d->%d", dials, fake.dials.Load(), read, fake.read.Load())
				}
				// The interval is over: one Apply probes (and pays the deadline again); its
				// failure opens the circuit again at once.
				time.Sleep(retry / 4)
				if _, took := applyTimed(); took != timeout {
					t.Fatalf("probe after the retry interval took %v, want the deadline %v", took, timeout)
				}
				if _, took := applyTimed(); took != 0 {
					t.Fatalf("after a failed probe: took %v, want the circuit open", took)
				}
				c := st.Counters()
				if c.Timeouts != 6 || c.RoundTrips != 6 || c.Skipped != 4 || c.FailClosed != 10 || c.Decided != 0 ||
					c.CircuitOpened != 2 || c.Circuit != circuitOpen {
					t.Fatalf("counters: %+v", c)
				}
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				if err := client.Close(); err != nil {
					t.Fatal(err)
				}
				fake.wg.Wait()
			})
		})
	}
}
