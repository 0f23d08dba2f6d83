package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
//     the state (replicated before the kill: WAIT for every replica of that master, and the
//     state read on each): the user's limit is kept exactly.
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
		if !st.fcall.Load() {
			t.Fatal("the library not loaded on the cluster's masters") // Redis 7: it has functions
		}
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
		stateKey := st.cfg.keyName(user, "failover", user, suffixState)
		addr, replicas := shardOf(t, cc, stateKey)
		// Replication is asynchronous: make sure every replica of that master has the state (a
		// write on the same slot, then WAIT on that connection for all of them; the replication
		// stream keeps the order of writes).
		mc := redis.NewClient(&redis.Options{Addr: addr})
		conn := mc.Conn()
		if err := conn.Set(ctx, prefix+"{"+user+"}wait", 1, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := conn.Wait(ctx, len(replicas), 5*time.Second).Result(); err != nil || n != int64(len(replicas)) {
			t.Fatalf("WAIT on %s: %d replicas acknowledged (%v), want %d", addr, n, err, len(replicas))
		}
		state, err := conn.Get(ctx, stateKey).Result()
		if err != nil {
			t.Fatalf("state on master %s: %v", addr, err)
		}
		_ = conn.Close()
		_ = mc.Close()
		// Whichever replica is promoted holds the state: read it on each (READONLY). A replica
		// that acknowledged the offset but holds other data is the harness's fault, not the
		// store's: say so here rather than as a lost decision.
		for _, r := range replicas {
			if got := readOnReplica(t, r, stateKey); got != state {
				t.Fatalf("replica %s of %s (WAIT acknowledged) holds state %q, master %q", r, addr, got, state)
			}
		}
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

// shardOf returns the master serving key's slot and its replicas as that master lists them
// (CLUSTER REPLICAS, which unlike CLUSTER SLOTS includes replicas still in their first sync); it
// fails the test when the master has no replica.
func shardOf(t *testing.T, cc *redis.ClusterClient, key string) (master string, replicas []string) {
	t.Helper()
	ctx := context.Background()
	m, err := cc.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	id, err := m.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	lines, err := m.Do(ctx, "CLUSTER", "REPLICAS", id).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		// <id> <ip:port@cport[,hostname]> <flags> ...
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("CLUSTER REPLICAS on %s: %q", m.Options().Addr, l)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		replicas = append(replicas, addr)
	}
	master = m.Options().Addr
	if len(replicas) == 0 {
		t.Fatalf("master %s of %q has no replica: %q", master, key, lines)
	}
	return master, replicas
}

// readOnReplica reads key's string value on the replica at addr (READONLY), "" when absent.
func readOnReplica(t *testing.T, addr, key string) string {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer func() { _ = c.Close() }()
	conn := c.Conn()
	defer func() { _ = conn.Close() }()
	if err := conn.ReadOnly(ctx).Err(); err != nil {
		t.Fatalf("READONLY on %s: %v", addr, err)
	}
	v, err := conn.Get(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("GET on replica %s: %v", addr, err)
	}
	return v
}
