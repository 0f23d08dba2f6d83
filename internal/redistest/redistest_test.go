package redistest

import (
	"testing"

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
