package redistest

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStartStopRestart: the started server answers, stops answering after Stop, and answers again
// after Restart.
func TestStartStopRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("PING after start: %v", err)
	}
	s.Stop()
	if err := ping(s.Addr()); err == nil {
		t.Fatal("PING answered after Stop")
	}
	s.Restart()
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("PING after restart: %v", err)
	}
	s.Stop()
	s.Stop() // idempotent
}

// TestDelay: through the proxy, a PING's round trip takes at least twice the one-way delay, and
// the reply is intact.
func TestDelay(t *testing.T) {
	s := Start(t)
	const oneWay = 20 * time.Millisecond
	addr := Delay(t, s.Addr(), oneWay)
	for range 3 {
		start := time.Now()
		if err := ping(addr); err != nil {
			t.Fatalf("PING through the proxy: %v", err)
		}
		if took := time.Since(start); took < 2*oneWay {
			t.Fatalf("PING through the proxy took %v, want at least %v", took, 2*oneWay)
		}
	}
}

// TestPauseResume: a paused server does not answer (the PING times out), and answers again after
// Resume.
func TestPauseResume(t *testing.T) {
	s := Start(t)
	s.Pause()
	if err := ping(s.Addr()); err == nil {
		t.Fatal("PING answered while paused")
	}
	s.Resume()
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
}
