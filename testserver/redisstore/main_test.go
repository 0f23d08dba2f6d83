package redisstore

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// quiet drops go-redis's log lines ("failed to dial ..."), which the failure tests provoke on
// purpose.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	// After failed dials to a killed node, go-redis's pool redials in a goroutine that sleeps a
	// second between tries and sees only then that its client was closed (TestRealCluster kills
	// a master): it ends on its own, a second late.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}
