package main

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestBinary builds the command and runs it as a subprocess, as a user would: it prints exactly
// the listening line on stdout, serves, reloads its config on a real SIGHUP, and exits 0 on
// SIGTERM.
func TestBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGHUP and SIGTERM")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "testserver")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := writeFile(t, "rules.json", `{"rules": [{"name": "a", "limit": 1, "window": "1h"}]}`)

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-config", cfg)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	stderr := readLines(stderrPipe)
	out := bufio.NewReader(stdout)

	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the listening line: %v (got %q)", err, line)
	}
	u, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "listening on ")
	if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasSuffix(u, ":0") {
		t.Fatalf("stdout line = %q, want \"listening on http://127.0.0.1:PORT\"", line)
	}

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(path string) int {
		t.Helper()
		resp, err := client.Get(u + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/-/healthz"); code != 200 {
		t.Fatalf("/-/healthz: %d", code)
	}
	if a, b := get("/"), get("/"); a != 200 || b != 429 {
		t.Fatalf("limit 1: statuses %d, %d; want 200, 429", a, b)
	}

	replaceFile(t, cfg, `{"rules": [{"name": "a", "limit": 3, "window": "1h"}]}`)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "reloaded 1 rule(s)")
	if code := get("/"); code != 200 {
		t.Errorf("after reload to limit 3: %d, want 200", code)
	}

	client.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(out)
	for range stderr { // drain until the process closes stderr
	}
	err = cmd.Wait()
	killed = true
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Errorf("exit status %d after SIGTERM, want 0", exit.ExitCode())
	} else if err != nil {
		t.Errorf("wait: %v", err)
	}
	if len(rest) != 0 {
		t.Errorf("stdout after the listening line: %q, want nothing", rest)
	}
}

// waitFor reads lines until one contains substr; it fails if the stream ends first.
func waitFor(t *testing.T, lines <-chan string, substr string) {
	t.Helper()
	var seen []string
	for line := range lines {
		if strings.Contains(line, substr) {
			return
		}
		seen = append(seen, line)
	}
	t.Fatalf("stderr ended without a line containing %q; got:\n%s", substr, strings.Join(seen, "\n"))
}
