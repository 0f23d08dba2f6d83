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
	_, err = await(ctx, r, nil, 0)
	return err
}

// await waits until r is due. When pause fires first, it gives r back and reports paused. A
// positive maxWait refuses a wait longer than it with *WaitTooLongError (Key unset). On any error r
// has been given back.
func await(ctx context.Context, r Reservation, pause <-chan struct{}, maxWait time.Duration) (paused bool, err error) {
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
			return false, nil
		}
		if deadline, ok := ctx.Deadline(); ok && d > deadline.Sub(now) {
			r.Cancel(now)
			return false, &WouldExceedDeadlineError{Wait: d}
		}
		if maxWait > 0 && d > maxWait {
			r.Cancel(now)
			return false, &WaitTooLongError{Wait: d, Max: maxWait}
		}
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			r.Cancel(time.Now())
			return false, ctx.Err()
		case <-pause:
			r.Cancel(time.Now())
			return true, nil
		case <-changed:
		case <-timer.C:
		}
	}
}
