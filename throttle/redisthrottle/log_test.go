package redisthrottle

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/redistest"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogger: WithLogger says when Redis becomes unreachable (once per outage, with the error),
// when it answers again, and each step of the law this process makes.
func TestLogger(t *testing.T) {
	srv := redistest.Start(t)
	var buf syncBuffer
	lg := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l := mustNew(t, newClient(t, srv.URL()), "logged", WithLogger(lg), WithRecheck(time.Second))
	for i := range 5 {
		attempt(t, l, time.Duration(i)*10*time.Millisecond, time.Millisecond, ok200)
	}
	attempt(t, l, 60*time.Millisecond, time.Millisecond, throttled429)
	if out := buf.String(); !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "{logged}: ") || !strings.Contains(out, "search") {
		t.Fatalf("no law event logged at Debug after a throttle:\n%s", out)
	}
	srv.Stop()
	now := epoch.Add(time.Second)
	l.Reserve(now)
	l.Reserve(now.Add(2 * time.Second)) // the recheck fails too: the same outage
	if out := buf.String(); strings.Count(out, "Redis unreachable") != 1 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "error=") {
		t.Fatalf("want one Warn line for the outage, with its error:\n%s", out)
	}
	srv.Restart()
	l.Reserve(now.Add(4 * time.Second))
	if out := buf.String(); !strings.Contains(out, "level=INFO") || !strings.Contains(out, "Redis answers again") {
		t.Fatalf("no Info line when Redis answered again:\n%s", out)
	}
}
