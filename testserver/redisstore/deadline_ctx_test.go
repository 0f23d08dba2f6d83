package redisstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// withDeadline returns a context of a deadlines of its own that ends d from now, and its cancel
// function, as context.WithTimeout(context.Background(), d) does.
func withDeadline(d time.Duration) (*deadlineCtx, context.CancelFunc) {
	c := new(deadlines).start(d)
	return c, c.cancel
}

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

// TestDeadlinesShareATimer checks the contexts of one deadlines, whose Done channels one timer
// closes: in virtual time, each channel closes exactly at its context's deadline, whatever the order
// the contexts were made and asked for Done in, whichever of them were cancelled first (cancel
// closes at once and the others keep their deadlines), again after the timer has been idle, and at
// once for a context first asked for Done after its deadline.
func TestDeadlinesShareATimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w deadlines
		start := time.Now()
		// Deadlines out of order (a shorter timeout after a longer one), one cancelled early,
		// one cancelled after its deadline.
		timeouts := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
			40 * time.Millisecond, 10 * time.Millisecond}
		ctxs := make([]*deadlineCtx, len(timeouts))
		for i, d := range timeouts {
			ctxs[i] = w.start(d)
		}
		for _, i := range []int{3, 0, 1, 4, 2} {
			_ = ctxs[i].Done()
		}
		ctxs[2].cancel()
		if err := ctxs[2].Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled: Err = %v", err)
		}
		var wg sync.WaitGroup
		for i, c := range ctxs {
			if i == 2 {
				continue
			}
			wg.Go(func() {
				<-c.Done()
				if got := time.Since(start); got != timeouts[i] {
					t.Errorf("context %d (timeout %v): Done closed after %v", i, timeouts[i], got)
				}
				if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("context %d: Err after its deadline = %v", i, err)
				}
			})
		}
		wg.Wait()
		ctxs[3].cancel() // after its deadline: stays DeadlineExceeded
		if err := ctxs[3].Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cancelled after the deadline: Err = %v", err)
		}
		if w.first != nil || w.last != nil {
			t.Fatal("ended contexts left in the list")
		}
		// The timer idle, a later context still ends at its deadline.
		time.Sleep(time.Second)
		c := w.start(5 * time.Millisecond)
		at := time.Now()
		<-c.Done()
		if got := time.Since(at); got != 5*time.Millisecond {
			t.Fatalf("after an idle second: Done closed after %v, want 5ms", got)
		}
		// Asked for Done only after its deadline: closed at once.
		late := w.start(time.Millisecond)
		time.Sleep(2 * time.Millisecond)
		at = time.Now()
		<-late.Done()
		if got := time.Since(at); got != 0 || !errors.Is(late.Err(), context.DeadlineExceeded) {
			t.Fatalf("Done asked after the deadline: closed after %v, Err %v", got, late.Err())
		}
	})
}
