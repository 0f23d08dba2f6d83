package retry

import (
	"context"
	"time"
)

// sleep waits d or until ctx ends, whichever is first, and returns ctx's error in the second case.
// It checks ctx first, so a context that has already ended returns at once, and stops its timer on
// return.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
