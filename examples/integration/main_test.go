package integration

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: the servers are closed, the clients'
// idle connections too.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
