package ctxsleep

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		assert.NoError(t, Sleep(context.Background(), 3*time.Second))
		assert.Equal(t, 3*time.Second, time.Since(start))

		assert.NoError(t, Sleep(context.Background(), -time.Second))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		assert.ErrorIs(t, Sleep(ctx, time.Hour), context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start), "ends with the context")

		assert.ErrorIs(t, Sleep(ctx, 0), context.DeadlineExceeded, "an ended context is checked first")
	})
}
