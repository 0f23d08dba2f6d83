package redisstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestDeadlineCtx checks that a round trip's context behaves as context.WithTimeout's: Err is nil
// until the deadline or cancel and the matching error after, Done is closed exactly when Err is
// set, whichever is asked first, and children derived from it end with it.
func TestDeadlineCtx(t *testing.T) {
	t.Run("before the deadline", func(t *testing.T) {
		// An hour away: no scheduling delay on a busy machine can reach it.
		ctx, cancel := withDeadline(time.Hour)
		defer cancel()
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > time.Hour {
			t.Fatalf("Deadline() = %v, %t", d, ok)
		}
		if err := ctx.Err(); err != nil {
			t.Fatalf("Err before the deadline = %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("Done closed before the deadline")
		default:
		}
	})
	t.Run("deadline, Done first", func(t *testing.T) {
		ctx, cancel := withDeadline(20 * time.Millisecond)
		defer cancel()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("Done not closed at the deadline")
		}
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err after the deadline = %v", err)
		}
	})
	t.Run("deadline, Err first", func(t *testing.T) {
		ctx, cancel := withDeadline(time.Millisecond)
		defer cancel()
		time.Sleep(2 * time.Millisecond)
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err after the deadline = %v", err)
		}
		select {
		case <-ctx.Done():
		default:
			t.Fatal("Err set but Done open")
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := withDeadline(time.Hour)
		child, stop := context.WithCancel(ctx)
		defer stop()
		cancel()
		cancel() // idempotent
		if err := ctx.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Err after cancel = %v", err)
		}
		select {
		case <-ctx.Done():
		default:
			t.Fatal("cancelled but Done open")
		}
		select {
		case <-child.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("child not ended with its parent")
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		ctx, cancel := withDeadline(time.Millisecond)
		defer cancel()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				<-ctx.Done()
				if ctx.Err() == nil {
					t.Error("Done closed, Err nil")
				}
			})
		}
		wg.Wait()
	})
}
