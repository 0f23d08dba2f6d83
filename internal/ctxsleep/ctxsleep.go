// Package ctxsleep is the one context-aware sleep the packages share.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, whichever is first, and returns ctx's error in the second case.
// It checks ctx first, so a context that has already ended returns at once, and stops its timer on
// return. A d of zero or less returns at once. It is safe for concurrent use.
func Sleep(ctx context.Context, d time.Duration) error {
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
