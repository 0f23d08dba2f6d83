package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/internal/redistest"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestRealCluster runs the store on a real Redis Cluster: three masters with one replica each,
// on loopback ports (redis-server --cluster-enabled yes, joined by redis-cli --cluster create).
//
//   - hash tags: a request's checks keyed alike share a slot and are decided by one script;
//     checks keyed differently are refused with ErrCrossSlot (Redis would refuse them:
//     CROSSSLOT), and WithHashTag puts them in one slot; the keys of different users spread over
//     all three masters;
//   - exact limits: three instances (three stores, three cluster clients) take 600 concurrent
//     requests over 20 users with a limit of 10 each: exactly 10 per user are admitted;
//   - failover: the master holding a user's state is killed; while the cluster elects its replica
//     (about the node timeout, 1 s, plus the election) the decisions are made by the policy
//     (fail-closed here: denied); then Redis decides again, on the promoted replica, which has
//     the state (replicated before the kill, WAIT): the user's limit is kept exactly.
func TestRealCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	prefix := uniquePrefix(t)
	newStore := func(opts ...Option) (*Store, *redis.ClusterClient) {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true})
		st, err := New(cc, append([]Option{WithKeyPrefix(prefix), WithPolicy(FailClosed), WithTimeout(2 * time.Second),
			WithRetryInterval(100 * time.Millisecond), WithFailureWindow(100 * time.Millisecond)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = st.Close()
			_ = cc.Close()
		})
		return st, cc
	}
	const limit = 10
	tb := mustAlg(t, algorithm.NameTokenBucket, limit, time.Hour, 0)
	log := mustAlg(t, algorithm.NameSlidingLog, limit, time.Hour, 0)
	check := func(rule, key string, a algorithm.Algorithm) testserver.StoreCheck {
		return testserver.StoreCheck{Rule: rule, Scope: rule, Key: key, N: 1, Algorithm: a}
	}

	t.Run("hash-tags", func(t *testing.T) {
		st, cc := newStore()
		ds, err := st.Apply(ctx, time.Now(), []testserver.StoreCheck{check("tb", "user:1", tb), check("log", "user:1", log)})
		if err != nil || !ds[0].Committed || !ds[1].Committed {
			t.Fatalf("two rules keyed alike: %+v, %v", ds, err)
		}
		if _, err := st.Apply(ctx, time.Now(), []testserver.StoreCheck{check("tb", "ip:10.0.0.1", tb), check("log", "user:1", log)}); !errors.Is(err, ErrCrossSlot) {
			t.Fatalf("two rules keyed differently: %v, want ErrCrossSlot", err)
		}
		shared, _ := newStore(WithHashTag(func(string, string) string { return "limits" }), WithKeyPrefix(prefix+"shared:"))
		ds, err = shared.Apply(ctx, time.Now(), []testserver.StoreCheck{check("tb", "ip:10.0.0.1", tb), check("log", "user:1", log)})
		if err != nil || !ds[0].Committed || !ds[1].Committed {
			t.Fatalf("shared tag: %+v, %v", ds, err)
		}
		masters := map[string]bool{}
		for i := range 20 {
			m, err := cc.MasterForKey(ctx, st.cfg.keyName(fmt.Sprintf("user:%d", i), "tb", fmt.Sprintf("user:%d", i), suffixState))
			if err != nil {
				t.Fatal(err)
			}
			masters[m.Options().Addr] = true
		}
		if len(masters) != 3 {
			t.Fatalf("20 users' states on %d masters, want all 3", len(masters))
		}
	})

	t.Run("exact-over-three-instances", func(t *testing.T) {
		var stores []*Store
		for range 3 {
			st, _ := newStore()
			stores = append(stores, st)
		}
		const users, requests = 20, 600
		admitted := make([]int, users)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range requests {
			wg.Go(func() {
				user := i % users
				ds, err := stores[i%3].Apply(ctx, time.Now(), []testserver.StoreCheck{check("exact", fmt.Sprintf("user:%d", user), tb)})
				if err != nil {
					t.Error(err)
					return
				}
				if ds[0].Decision.Allowed {
					mu.Lock()
					admitted[user]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for u, n := range admitted {
			if n != limit {
				t.Errorf("user %d: %d admitted of %d, want %d", u, n, requests/users, limit)
			}
		}
		for i, st := range stores {
			if c := st.Counters(); c.Errors+c.Timeouts+c.Skipped != 0 {
				t.Errorf("instance %d: %+v", i, c)
			}
		}
	})

	t.Run("failover", func(t *testing.T) {
		st, cc := newStore()
		const user = "user:failover"
		c := check("failover", user, tb)
		admit := func() (allowed bool) {
			ds, err := st.Apply(ctx, time.Now(), []testserver.StoreCheck{c})
			if err != nil {
				t.Fatal(err)
			}
			return ds[0].Decision.Allowed
		}
		total := 0
		for range 5 {
			if admit() {
				total++
			}
		}
		master, err := cc.MasterForKey(ctx, st.cfg.keyName(user, "failover", user, suffixState))
		if err != nil {
			t.Fatal(err)
		}
		addr := master.Options().Addr
		// Replication is asynchronous: make sure the replica has the state (a write on the same
		// slot, then WAIT on that connection; the replication stream keeps the order of writes).
		mc := redis.NewClient(&redis.Options{Addr: addr})
		conn := mc.Conn()
		if err := conn.Set(ctx, prefix+"{"+user+"}wait", 1, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := conn.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
			t.Fatalf("WAIT on %s: %d replicas acknowledged (%v), want 1", addr, n, err)
		}
		_ = conn.Close()
		_ = mc.Close()
		cl.Kill(addr)
		start := time.Now()
		before := st.Counters().Decided
		denied := 0
		for {
			if time.Since(start) > 20*time.Second {
				for _, a := range cl.Addrs() {
					if a != addr {
						t.Logf("CLUSTER NODES at %s:\n%s", a, cl.CLI(a, "CLUSTER", "NODES"))
						break
					}
				}
				t.Fatalf("no decision from Redis 20 s after killing master %s: %+v", addr, st.Counters())
			}
			ok := admit()
			if st.Counters().Decided != before { // Redis decided this one
				if ok {
					total++
				}
				break
			}
			if ok {
				t.Fatal("admitted by fail-closed during the failover")
			}
			denied++
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("master %s killed: Redis decided again after %v; %d decisions denied by fail-closed meanwhile", addr, time.Since(start).Round(10*time.Millisecond), denied)
		for range 2 * limit {
			if admit() {
				total++
			}
		}
		if total != limit {
			t.Fatalf("user admitted %d in all, want exactly %d (the promoted replica has the state)", total, limit)
		}
	})
}
