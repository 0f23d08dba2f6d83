// Package redistest gives tests a real Redis: the one named by STEADY_REDIS_URL, or a redis-server
// the test starts itself on a free loopback port and stops when it ends.
//
// When no Redis can be had (STEADY_REDIS_URL unset and no redis-server on PATH) the test is skipped,
// except under CI (CI=true), where a missing Redis is a failure: .ci/run installs redis-server.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvURL names the environment variable with the URL of a Redis to use instead of starting one.
const EnvURL = "STEADY_REDIS_URL"

// Server is a redis-server process started for a test. Its methods are safe for concurrent use.
type Server struct {
	t    testing.TB
	port int
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// URL returns the Redis URL of the test's Redis, starting a redis-server if STEADY_REDIS_URL is not
// set. The server (if started) is stopped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return Start(t).URL()
}

// Start starts a redis-server of the test's own on a free loopback port, with persistence off, and
// stops it when the test ends. It skips the test when redis-server is not installed, or fails it
// under CI.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server not found under CI (.ci/run installs it): %v", err)
		}
		t.Skipf("redis-server not installed (apt-get install redis-server, or set %s)", EnvURL)
	}
	s := &Server{t: t, port: freePort(t), dir: t.TempDir()}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL (database 0).
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Stop kills the server and waits for it to exit; a stopped server can be started again with
// Restart on the same port. Stop is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill() // SIGKILL ends a paused process too
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Pause stops the server's process (SIGSTOP) without closing its connections: Redis hangs, as
// across a network partition, and keeps its data. Resume continues it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig os.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatal("redistest: signal to a stopped server")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
}

// Restart starts the server again on the same port after Stop (its data is gone: persistence is
// off). It fails the test if the server cannot start.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command("redis-server",
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "no", "--loglevel", "warning")
	cmd.Stdout, cmd.Stderr = nil, nil // the null device: no copying goroutine to outlive the process
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if ping(s.Addr()) == nil {
			s.cmd = cmd
			return nil
		}
		select {
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("redistest: redis-server on port %d did not answer PING within 10s", s.port)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ping sends a PING in the Redis protocol and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("redistest: unexpected PING reply %q", line)
	}
	return nil
}

// freePort asks the kernel for a free loopback port.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
