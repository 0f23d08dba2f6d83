package redisstore

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// startClusterNode starts a redis-server in cluster mode owning all 16384 slots (a one-node
// cluster: Redis still refuses a script whose keys hash to different slots) and stops it when the
// test ends. It skips without redis-server, except under CI.
func startClusterNode(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server not found under CI: %v", err)
		}
		t.Skip("redis-server not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-config-file", dir+"/nodes.conf", "--dir", dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	node := redis.NewClient(&redis.Options{Addr: addr})
	defer node.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for node.Ping(ctx).Err() != nil {
		if ctx.Err() != nil {
			t.Fatal("cluster node did not answer PING within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := node.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(node.ClusterInfo(ctx).Val(), "cluster_state:ok") {
		if ctx.Err() != nil {
			t.Fatal("cluster state not ok within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr
}

// TestCluster: under a ClusterClient, checks of one request that share a tag (the default: rules
// keyed alike) are decided by one script in one slot; checks with different tags are refused
// with ErrCrossSlot before Redis sees them (Redis would refuse them too: CROSSSLOT); a shared tag
// from WithHashTag makes them one slot again.
func TestCluster(t *testing.T) {
	addr := startClusterNode(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cc.Close() })
	tb := mustAlg(t, algorithm.NameTokenBucket, 5, time.Minute, 0)
	log := mustAlg(t, algorithm.NameSlidingLog, 5, time.Minute, 0)
	check := func(rule, key string, a algorithm.Algorithm) testserver.StoreCheck {
		return testserver.StoreCheck{Rule: rule, Scope: rule + "-scope", Key: key, N: 1, Algorithm: a}
	}
	sameKey := []testserver.StoreCheck{check("a", "user:7", tb), check("b", "user:7", log)}
	otherKeys := []testserver.StoreCheck{check("a", "ip:10.0.0.1", tb), check("b", "user:7", log)}

	st, err := New(cc, WithKeyPrefix(uniquePrefix(t)), WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for range 2 {
		ds := apply(t, st, time.Now(), sameKey...)
		if !ds[0].Committed || !ds[1].Committed {
			t.Fatalf("same tag: %+v", ds)
		}
	}
	if _, err := st.Apply(context.Background(), time.Now(), otherKeys); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("different tags: %v, want ErrCrossSlot", err)
	}
	if c := st.Counters(); c.Decided != 2 || c.Errors+c.Timeouts != 0 {
		t.Fatalf("counters %+v", c)
	}

	// Redis agrees: the same script with the keys in different slots fails.
	keys := []string{st.cfg.keyName("ip:10.0.0.1", "s", "ip:10.0.0.1", suffixState), st.cfg.keyName("user:7", "s", "user:7", suffixState)}
	if err := scriptMany.Run(context.Background(), cc, keys, "", 0, 0).Err(); err == nil {
		t.Fatal("Redis ran a script on keys of two slots")
	}

	shared, err := New(cc, WithKeyPrefix(uniquePrefix(t)), WithTimeout(10*time.Second),
		WithHashTag(func(rule, key string) string { return "limits" }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Close() })
	ds := apply(t, shared, time.Now(), otherKeys...)
	if !ds[0].Committed || !ds[1].Committed {
		t.Fatalf("shared tag: %+v", ds)
	}
}
