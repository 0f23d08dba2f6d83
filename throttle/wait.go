package throttle

import (
	"context"
	"time"
)

// Wait blocks until l lets one request go. It is the blocking shorthand for l.Reserve(time.Now())
// followed by waiting until the reservation is due:
//   - it checks ctx first and returns ctx.Err() without reserving when ctx has already ended;
//   - it returns the limiter's refusal (such as *BacklogFullError) when Reserve fails;
//   - when the predicted wait ends after ctx's deadline it gives the reservation back and returns
//     *WouldExceedDeadlineError at once, instead of sleeping towards a certain failure;
//   - when ctx ends while waiting it gives the reservation back (later waiters move up) and
//     returns ctx.Err() at once.
//
// It follows the reservation when its time moves (Reservation.Changed). A nil l never waits.
// Wait starts no goroutine and is safe for concurrent use when l is.
func Wait(ctx context.Context, l Limiter) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if l == nil {
		return nil
	}
	now := time.Now()
	r, err := l.Reserve(now)
	if err != nil || r.Delay(now) == 0 {
		return err
	}
	_, late, err := await(ctx, r, nil, nil)
	if err == nil && late >= 0 {
		observeLateness(l, time.Now(), late)
	}
	return err
}

// observeLateness tells l that its reservation's waiter woke at now, late after the reservation's
// time, when l wants to know (LatenessLearner) and the waiter slept on a timer (late >= 0).
func observeLateness(l Limiter, now time.Time, late time.Duration) {
	if ll, ok := l.(LatenessLearner); ok && late >= 0 {
		ll.ObserveLateness(now, late)
	}
}

// await waits until r is due. When pause fires first, it gives r back and reports paused. A
// positive maxWait() refuses a wait longer than it with *WaitTooLongError (Key unset); it is asked
// again whenever the reservation moves (a limiter that learns can start holding meanwhile). A nil
// maxWait bounds nothing. On any error r
// has been given back. late is how long after the reservation's time the waiter woke, when it slept
// on a timer until then, and -1 when it did not sleep (due at once, or woken by a move).
func await(ctx context.Context, r Reservation, pause <-chan struct{}, maxWait func() time.Duration) (paused bool, late time.Duration, err error) {
	late = -1
	var target time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		changed := r.Changed() // before Delay, so that no move is missed
		now := time.Now()
		d := r.Delay(now)
		if d <= 0 {
			if !target.IsZero() {
				late = max(now.Sub(target), 0)
			}
			return false, late, nil
		}
		if deadline, ok := ctx.Deadline(); ok && d > deadline.Sub(now) {
			r.Cancel(now)
			return false, -1, &WouldExceedDeadlineError{Wait: d}
		}
		if maxWait != nil {
			if m := maxWait(); m > 0 && d > m {
				r.Cancel(now)
				return false, -1, &WaitTooLongError{Wait: d, Max: m}
			}
		}
		target = now.Add(d)
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			r.Cancel(time.Now())
			return false, -1, ctx.Err()
		case <-pause:
			r.Cancel(time.Now())
			return true, -1, nil
		case <-changed:
			target = time.Time{} // moved: the next sleep has a target of its own
		case <-timer.C:
		}
	}
}
