package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/steadyhttp/steady/testserver"
)

// lineWriter is an io.Writer that collects what is written and delivers every complete line on
// a channel, so a test can wait for a line instead of sleeping. Safe for concurrent use.
type lineWriter struct {
	mu      sync.Mutex
	all     strings.Builder
	partial string
	lines   chan string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 1024)} }

func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.all.Write(p)
	lw.partial += string(p)
	for {
		i := strings.IndexByte(lw.partial, '\n')
		if i < 0 {
			break
		}
		select {
		case lw.lines <- lw.partial[:i]:
		default: // nobody is reading that far; the text is still in all
		}
		lw.partial = lw.partial[i+1:]
	}
	return len(p), nil
}

func (lw *lineWriter) String() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.all.String()
}

// waitLine returns the first line delivered from now on that contains substr, failing the test
// if the command exits first.
func (lw *lineWriter) waitLine(t *testing.T, substr string, exited chan int) string {
	t.Helper()
	for {
		select {
		case line := <-lw.lines:
			if strings.Contains(line, substr) {
				return line
			}
		case code := <-exited:
			// Put it back for whoever stops the instance.
			exited <- code
			t.Fatalf("command exited with %d while waiting for a line with %q; stderr:\n%s", code, substr, lw.String())
			return ""
		}
	}
}

// instance is one in-process run of the command.
type instance struct {
	url    string
	stdout *lineWriter
	stderr *lineWriter
	reload chan os.Signal
	cancel context.CancelFunc
	exited chan int // receives the exit status once
	client *http.Client

	stopOnce sync.Once
	code     int
}

// start runs the command in-process with args plus "-addr 127.0.0.1:0", waits for its listening
// line, and stops it (expecting exit status 0) when the test ends.
func start(t *testing.T, args ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{
		stdout: newLineWriter(),
		stderr: newLineWriter(),
		reload: make(chan os.Signal, 1),
		cancel: cancel,
		exited: make(chan int, 1),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}},
	}
	args = append([]string{"-addr", "127.0.0.1:0"}, args...)
	go func() { in.exited <- run(ctx, args, in.stdout, in.stderr, in.reload) }()
	select {
	case line := <-in.stdout.lines:
		u, ok := strings.CutPrefix(line, "listening on ")
		if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasSuffix(u, ":0") {
			cancel()
			t.Fatalf("first stdout line = %q, want \"listening on http://127.0.0.1:PORT\"", line)
		}
		in.url = u
	case code := <-in.exited:
		cancel()
		t.Fatalf("run(%q) exited with %d before listening; stderr:\n%s", args, code, in.stderr.String())
	}
	t.Cleanup(func() {
		if code := in.stop(); code != 0 {
			t.Errorf("exit status %d, want 0; stderr:\n%s", code, in.stderr.String())
		}
		if out := in.stdout.String(); strings.Count(out, "\n") != 1 {
			t.Errorf("stdout = %q, want exactly the listening line", out)
		}
	})
	return in
}

// stop cancels the command's context and returns its exit status.
func (in *instance) stop() int {
	in.stopOnce.Do(func() {
		// Close the client's idle connections first: net/http's Shutdown waits up to 5 s for
		// connections that never carried a request, which the transport's spare dials leave.
		in.client.CloseIdleConnections()
		in.cancel()
		in.code = <-in.exited
		in.client.CloseIdleConnections()
	})
	return in.code
}

// get sends a GET for path and returns the response with its body read.
func (in *instance) get(t *testing.T, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, in.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := in.client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp, string(body)
}

// stats fetches /-/stats.
func (in *instance) stats(t *testing.T) testserver.Stats {
	t.Helper()
	resp, body := in.get(t, "/-/stats")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/-/stats: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	var st testserver.Stats
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		t.Fatalf("/-/stats: %v in %s", err, body)
	}
	return st
}

// writeFile writes content to name in a fresh temporary directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// replaceFile rewrites an existing file.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readLines returns a channel of r's lines, closed at EOF.
func readLines(r io.Reader) <-chan string {
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}
