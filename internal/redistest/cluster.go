package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of redis-server processes on loopback ports, started for a test and
// stopped when it ends. Its methods are safe for concurrent use.
type Cluster struct {
	t     testing.TB
	mu    sync.Mutex
	nodes map[string]*exec.Cmd // by host:port; nil once killed
	addrs []string
}

// StartCluster starts masters×(1+replicas) redis-servers with --cluster-enabled yes (node
// timeout 1 s, persistence off, each node in a directory of its own), joins them with redis-cli
// --cluster create, and waits until every node reports cluster_state:ok. It skips the test when
// redis-server or redis-cli is not installed, or fails it under CI (.ci/run installs
// redis-tools).
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found under CI (.ci/run installs redis-server and redis-tools): %v", bin, err)
			}
			t.Skipf("%s not installed (apt-get install redis-server redis-tools)", bin)
		}
	}
	c := &Cluster{t: t, nodes: map[string]*exec.Cmd{}}
	t.Cleanup(c.stop)
	root := t.TempDir()
	for range masters * (1 + replicas) {
		port := freePort(t)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		// Each node has a directory of its own, as on separate hosts: a replica receives its
		// master's snapshot into a temporary file there, renames it to dump.rdb and loads
		// dump.rdb. In one shared directory the replicas' initial syncs (all at the same moment,
		// right after the cluster is created) rename over each other's dump.rdb, and a replica
		// can load another master's data while acknowledging its own master's offset: WAIT says
		// replicated, and a failover loses the writes.
		dir := filepath.Join(root, strconv.Itoa(port))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatalf("redistest: %v", err)
		}
		cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "1000", "--dir", dir, "--save", "", "--appendonly", "no",
			"--protected-mode", "no", "--loglevel", "warning",
			// A replica's first sync starts at once, not after Redis's default 5 s wait for
			// more replicas to join one transfer (each master here has its replicas from the
			// start): a test that WAITs for replication is not left a second of its timeout.
			"--repl-diskless-sync-delay", "0")
		cmd.Stdout, cmd.Stderr = nil, nil // the null device: no copying goroutine outlives a kill
		if err := cmd.Start(); err != nil {
			t.Fatalf("redistest: start redis-server: %v", err)
		}
		c.mu.Lock()
		c.nodes[addr] = cmd
		c.addrs = append(c.addrs, addr)
		c.mu.Unlock()
	}
	for _, addr := range c.addrs {
		c.waitFor(addr, func() error { return ping(addr) })
	}
	args := append([]string{"--cluster", "create"}, c.addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, addr := range c.addrs {
		c.waitFor(addr, func() error { return c.stateOK(addr) })
	}
	return c
}

// Addrs returns the nodes' host:port, masters and replicas alike.
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.addrs...)
}

// Kill kills the node at addr (SIGKILL) and waits for it to exit.
func (c *Cluster) Kill(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cmd := c.nodes[addr]; cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		c.nodes[addr] = nil
	}
}

// CLI runs redis-cli against addr with args and returns its output, failing the test on error.
func (c *Cluster) CLI(addr string, args ...string) string {
	c.t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("redis-cli %s %v: %v\n%s", addr, args, err, out)
	}
	return string(bytes.TrimSpace(out))
}

// stateOK asks addr for CLUSTER INFO and reports an error unless the cluster is ok there.
func (c *Cluster) stateOK(addr string) error {
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("redis-cli", "-h", host, "-p", port, "CLUSTER", "INFO").Output()
	if err != nil {
		return err
	}
	if !strings.Contains(string(out), "cluster_state:ok") {
		return fmt.Errorf("redistest: %s: cluster not ok yet", addr)
	}
	return nil
}

// waitFor retries f every 50 ms for up to 30 s, failing the test if it never succeeds.
func (c *Cluster) waitFor(addr string, f func() error) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("redistest: node %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop kills every node.
func (c *Cluster) stop() {
	for _, addr := range c.Addrs() {
		c.Kill(addr)
	}
}
